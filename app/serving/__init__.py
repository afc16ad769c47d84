"""How bytes leave the app: security headers, HEAD, compression, once-compressed files, the compact trace, JSON."""
