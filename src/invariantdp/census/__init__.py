"""Census noisy measurement files: read them, simulate them, estimate from them by GLS."""
