"""Re-running chosen mutants of a mutmut run in one pytest session (a pytest plugin).

    cd .mutation/NAME/mutants
    PYTHONPATH=../../../tests MUTATION_RERUN=names.txt MUTATION_RERUN_OUT=results.jsonl \\
        nice -n 19 python -m pytest -q -n 0 -p no:randomly -p mutation_rerun TESTS...

mutmut runs a pytest process per mutant; re-running a few hundred survivors against tests added since is
faster in one process: mutmut's trampoline reads MUTANT_UNDER_TEST on every call, so the session first runs
every test once with no mutant (all must pass) noting which tests reach which function, then, for each mutant
named in the file, runs the tests that reach its function, fastest first, until one fails.  Each result is a
line of JSON (killed, with the test; survived; timeout; crashed: the session ended inside the mutant, which a
restart skips); a restarted session skips the mutants already written.
"""

import json
import os
import signal
import time

import pytest
from _pytest.runner import runtestprotocol

import mutmut.mutation.trampoline as trampoline
from mutmut.utils.format_utils import mangled_name_from_mutant_name

_reached = set()


def _note_reached(name, caller=None):
    _reached.add(name)


trampoline.record_trampoline_hit = _note_reached   # (mutmut's own needs its run's configuration)


class _Timeout(BaseException):   # not an Exception: code under test that catches those must not swallow it
    pass


def _on_alarm(signum, frame):
    raise _Timeout()


def _passes(item, nextitem):
    return all(not report.failed for report in runtestprotocol(item, nextitem=nextitem, log=False))


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    items = session.items
    out_path = os.environ["MUTATION_RERUN_OUT"]
    done = set()
    if os.path.exists(out_path):
        done = {json.loads(line)["mutant"] for line in open(out_path)}
    current = out_path + ".current"
    with open(out_path, "a") as out:
        if os.path.exists(current) and (crashed := open(current).read().strip()) and crashed not in done:
            out.write(json.dumps({"mutant": crashed, "status": "crashed", "killer": None}) + "\n")
            done.add(crashed)
    reaching, seconds = {}, {}
    os.environ["MUTANT_UNDER_TEST"] = "stats"
    failed = []
    for index, item in enumerate(items):
        _reached.clear()
        start = time.monotonic()
        if not _passes(item, items[index + 1] if index + 1 < len(items) else None):
            failed.append(item.nodeid)
        seconds[item.nodeid] = time.monotonic() - start
        for name in _reached:
            reaching.setdefault(name, []).append(item)
    print(f"clean pass: {len(items)} tests, {len(failed)} failed: {failed[:5]}", flush=True)
    if failed:
        return True
    signal.signal(signal.SIGALRM, _on_alarm)
    with open(out_path, "a") as out:
        for mutant in open(os.environ["MUTATION_RERUN"]).read().split():
            if mutant in done:
                continue
            module, _, name = mutant.rpartition(".")
            tests = sorted(reaching.get(f"{module}.{mangled_name_from_mutant_name(name)}", []),
                           key=lambda item: seconds[item.nodeid])
            status, killer = ("survived" if tests else "no tests"), None
            with open(current, "w") as note:
                note.write(mutant)
            os.environ["MUTANT_UNDER_TEST"] = mutant
            start = time.monotonic()
            signal.alarm(int(min(120, max(15, 4 * sum(seconds[test.nodeid] for test in tests) + 10))))
            try:
                for index, item in enumerate(tests):
                    if not _passes(item, tests[index + 1] if index + 1 < len(tests) else None):
                        status, killer = "killed", item.nodeid
                        session._setupstate.teardown_exact(None)   # nothing of a mutant's fixtures carries on
                        break
            except _Timeout:
                status = "timeout"
                try:
                    session._setupstate.teardown_exact(None)
                except BaseException:
                    pass
            finally:
                signal.alarm(0)
            os.environ["MUTANT_UNDER_TEST"] = ""
            out.write(json.dumps({"mutant": mutant, "status": status, "killer": killer, "tests": len(tests),
                                  "seconds": round(time.monotonic() - start, 2)}) + "\n")
            out.flush()
    return True
