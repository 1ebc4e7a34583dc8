"""VBench-2.0 as an evaluator: its dimension catalogue, the run specification, the environment it runs in, the
runner, its result files and the aggregation into the paper's scores."""
