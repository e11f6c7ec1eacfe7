"""The lean training core: negative sampling, 1vsAll and KvsAll regimes, checkpoints with resume, seed selection."""
