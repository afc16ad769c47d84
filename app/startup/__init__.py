"""What runs before the first request: the shipped-file and bundle checks, the prerendered figures, the
serve CLI, health."""
