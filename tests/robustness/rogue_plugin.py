"""A third-party solver that misbehaves on purpose, for the torture suite (issue 17).

``search.behaviour``: ``hang`` never returns and never looks at the stop flag; ``deaf`` ignores
a cancel for ``seconds`` and then returns its model; ``chatty`` prints to stdout (through Python
and straight to file descriptor 1) while it runs; ``hog`` allocates memory until it is stopped.
Each finds the toy's exact stump first, so a run that ends has a real model.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Literal

from glasswork import Certificate, Problem, Result, SolveContext, Solver, SolverSpec, Status, StrictModel, hookimpl
from pydantic import Field
from toy_plugin import best_stump


class RogueSearch(StrictModel):
    behaviour: Literal["hang", "deaf", "chatty", "hog"] = "chatty"
    seconds: float = Field(2.0, gt=0, le=3600, description="How long 'deaf' ignores a cancel.")


class RogueSpec(SolverSpec):
    solver: Literal["rogue"]
    search: RogueSearch = Field(default_factory=RogueSearch)


class RogueSolver(Solver):
    name = "rogue"
    version = "0.1"
    spec_model = RogueSpec
    description = "A misbehaving third-party solver (torture suite)."

    def solve(self, problem: Problem, ctx: SolveContext) -> Result:
        search = self.spec.search  # type: ignore[attr-defined]
        model, objective = best_stump(problem, 0.0)
        ctx.incumbent(objective, model, nodes=1)
        status: Status | None = None
        if search.behaviour == "hang":
            while True:
                time.sleep(0.05)
        if search.behaviour == "deaf":
            time.sleep(search.seconds)
            status = Status.CANCELLED if ctx.cancelled else Status.HEURISTIC
        if search.behaviour == "chatty":
            for i in range(20):
                print(f"rogue: step {i} {{not json", flush=True)
                os.write(1, b"rogue: raw write to fd 1 [\n")
                sys.stdout.write("rogue: sys.stdout.write\n")
                ctx.progress(objective=objective, lower_bound=0.0, nodes=i + 1)
                time.sleep(0.01)
            status = Status.HEURISTIC
        if search.behaviour == "hog":
            hoard: list[bytearray] = []
            while (status := ctx.check(len(hoard))) is None:
                hoard.append(bytearray(16 * 1024 * 1024))  # touched, so resident
                ctx.progress(objective=objective, lower_bound=0.0, nodes=len(hoard))
                time.sleep(0.01)
            hoard.clear()
        return Result(
            model,
            Certificate(status=status or Status.HEURISTIC, objective=objective, lower_bound=0.0),
            stats={"nodes": 1},
        )


@hookimpl
def register_solvers(register: Any) -> None:
    register(RogueSolver)
