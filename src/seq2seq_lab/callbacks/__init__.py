"""Lightning callbacks: throughput, attention plots, Transformer diagnostics, wall-clock
checkpoints."""
