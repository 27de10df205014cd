"""Lightning callbacks: throughput, Transformer diagnostics, wall-clock checkpoints."""
