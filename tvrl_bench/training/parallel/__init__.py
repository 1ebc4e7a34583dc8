"""Training over several processes: process groups, FSDP sharding, and sharded state and evaluation."""
