"""reporter: route, screen, digest and publish a literature-screening operation."""

__version__ = "0.1.0"
