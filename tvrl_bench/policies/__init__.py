"""Video generators (policies). Importing this package registers every policy."""
