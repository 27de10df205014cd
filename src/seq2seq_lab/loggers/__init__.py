"""Lightning loggers: the CSV log every run keeps (resumable) and W&B (offline unless a key is
configured)."""
