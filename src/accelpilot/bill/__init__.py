"""bill package."""
