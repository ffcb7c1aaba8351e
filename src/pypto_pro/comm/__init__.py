"""Communication between processes: groups (torch.distributed) and the symmetric heap (shared memory)."""
