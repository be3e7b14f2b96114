"""The load engines arraybench drives (fio, and any other registered one)."""
