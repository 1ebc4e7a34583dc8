"""The metrics tables: what a table definition (`reports/tables/<name>.toml`) says and the TableResult built from a
study's runs.

    definitions.py       finding and loading definitions      definition_parser.py  TOML -> a checked definition
    definition_types.py  the definition types                 filters.py            param filters on a runs frame
    metric_table.py      a MetricTable + runs -> TableResult  cell_builder.py       a cell's runs, seeds and statistics
    half_gain.py         the "steps to half gain" column      table_result.py       the TableResult every renderer reads
    decision_cells.py    the staged decision column's cells   table_notes.py        the notes and warnings under a table
"""
