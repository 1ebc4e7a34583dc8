"""The sweep engine: study files, their expansion into trials, the driver (resume and retries) and its state."""
