"""Evaluators. Importing this package registers every evaluator."""
