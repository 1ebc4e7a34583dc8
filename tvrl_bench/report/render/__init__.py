"""A TableResult written out: Markdown and LaTeX (formats.py, with the cell texts' spec and `write_table`), HTML
(html.py), CSV (csv.py), the cell and row texts they share (cells.py), and the plots beside a table (plots.py)."""
