"""The HTTP routes, one module per area, each an APIRouter that app/main.py includes."""
