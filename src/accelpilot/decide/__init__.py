"""decide package."""
