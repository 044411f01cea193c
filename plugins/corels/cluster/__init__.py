"""CORELS on a Dask cluster: one driver that deals subtrees to the workers, and the tasks of the
search and of the Rashomon set it deals."""
