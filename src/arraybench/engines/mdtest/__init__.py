"""mdtest (IOR's metadata benchmark, an MPI program) as a load engine: CSCS's metadata study
(create, stat, read and remove of files and directories by 1-32 tasks per node) run by the
tool the seed ran, through `mpirun` (docs/engines.md, "mdtest")."""
