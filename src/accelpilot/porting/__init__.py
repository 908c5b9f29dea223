"""porting package."""
