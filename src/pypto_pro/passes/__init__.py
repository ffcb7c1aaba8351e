"""IR-to-IR passes over the tile IR (each module holds one pass)."""
from .auto_mutex import insert_auto_mutex

__all__ = ["insert_auto_mutex"]
