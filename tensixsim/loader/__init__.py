"""Program loading."""
