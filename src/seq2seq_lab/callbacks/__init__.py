"""Lightning callbacks: throughput, Transformer diagnostics."""
