"""A campaign run: its points, the tests beside the grid, the run-wide setup."""
