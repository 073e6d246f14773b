"""PyTorch's own Dynamo tests on each torch release, without and with tdcompat (issues 27, 28).

    # one run: the tests of DIR on this interpreter's torch (or --python ENV), as shipped or with tdcompat
    python scripts/upstream_tests.py --tests-dir ~/.cache/tdcompat/upstream/dynamo --mode native \
        --python ~/.cache/tdcompat/nox/tests-2-15/bin/python --out benchmarks/upstream_tests/2.15.0-native.json
    # the table: per release and family, the tests that pass natively on 2.15, without and with tdcompat,
    # and every test that passes without tdcompat and fails with it
    python scripts/upstream_tests.py --report benchmarks/upstream_tests

The upstream files are inputs, never committed: ``--tests-dir`` is a directory holding some of
``test_dicts.py``, ``test_functions.py``, ``test_misc.py``, ``test_repros.py`` from
``test/dynamo/`` of a PyTorch checkout (``UPSTREAM`` below records the path and revision the
committed results were measured with; docs/upstream_tests.md says how to obtain them). Nothing is
fetched at run time.

Selection (data, ``SELECT``): every test of ``test_dicts.py``; in the other files only the tests whose
name or source matches tdcompat's families (user mappings, ``MutableMapping``, dict subclasses,
``UserDict``, ``OrderedDict``, ``__dict__``, ``vars()``, module attribute set/del). Families (data,
``FAMILIES``): the first rule that matches a test's class, name or source names it.

Modes: ``native`` never imports tdcompat (the JSON records that it was not in ``sys.modules`` at the
end: torch as shipped); ``tdcompat`` imports it before the test files are collected and records
``tdcompat.status()``'s applied patches.

One pytest process per run, one test at a time (no ``-n``), with a per-test timeout (SIGALRM). The
test files are copied to a temporary directory next to a small pytest plugin (written by this script)
that provides, only where the installed torch lacks them, the test utilities the newest files import
(``make_dynamo_test``, ``torch._dynamo.utils.dict_items``, the config keys ``enable_trace_unittest``
and ``debug_force_nested_calls``); the plugin records each such shim in the JSON. A test that cannot
run because of the harness is ``harness-incompatible``, never a pass or a fail: a collection error of
its file, a missing test utility (``torch._dynamo.testing``, ``torch.testing._internal``), or a
``make_dynamo_test`` test failing on a torch that cannot trace ``unittest`` assertions (no
``enable_trace_unittest`` of its own: 2.5-2.7). ``--mode disabled`` imports tdcompat with
``TDCOMPAT_DISABLE=*`` (to check that this is inert).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Where the committed results' test files come from (pytorch/pytorch, the stored revision of each file).
UPSTREAM = {
    "test_dicts.py": {"path": "test/dynamo/test_dicts.py", "commit": "0059dc46341d46bb36ff6e8f0bce233471708bad",
                      "blob": "18fd1c05325ac366af0286caebec073dcfb82f8c"},  # git hash-object of the file measured
    # the stored revisions these were read from (each file's own: the index holds no copy of them at test_dicts.py's)
    "test_functions.py": {"path": "test/dynamo/test_functions.py", "commit": "0014f2167fd77588eec64d39ef4428e95c614e46",
                          "blob": "3d1d11adde6bc16f9da435f6a022accf70c633bc"},
    "test_misc.py": {"path": "test/dynamo/test_misc.py", "commit": "001077cbc0f328b8a743c7a2d1bf64f98c096377",
                     "blob": "fe90e4b46b611fdc3c1443ddeb54be451ad60851"},
    "test_repros.py": {"path": "test/dynamo/test_repros.py", "commit": "fd69e1f884d73bbfd20d349bdc24645e2cf53a4b",
                       "blob": "df1a2a217a24f3412d0091a081ad1b583dd4cee2"},
}


def normalize_message(message: str) -> str:
    """One line without the temporary directory's name and Dynamo's advice tail (stable between runs)."""
    message = re.sub(r"\S*upstream_tests-[A-Za-z0-9_]+/", "", message)
    return message.split(" Set TORCH_LOGS=")[0].split(" You can suppress this")[0][:MESSAGE_CHARS]


MESSAGE_CHARS = 160


def write_result(path: str, result: dict) -> None:
    """The run's JSON: its fields, then one line per test (small, and a diff shows which tests moved)."""
    head = {k: v for k, v in result.items() if k != "tests"}
    lines = [f"  {json.dumps(t)}: {json.dumps(r, sort_keys=True)}" for t, r in sorted(result["tests"].items())]
    text = json.dumps(head, indent=1, sort_keys=True)[:-2] + ',\n "tests": {\n' + ",\n".join(lines) + "\n }\n}\n"
    json.loads(text)  # well-formed
    with open(path, "w") as fh:
        fh.write(text)


def tdcompat_source(rev, work: str) -> tuple:
    """(directory tdcompat is imported from, its revision): the checkout's working tree ('<HEAD>+dirty' when
    tdcompat/ has uncommitted changes), or with ``--tdcompat-rev`` that commit's tdcompat/ exported clean."""
    def git(*cmd):
        return subprocess.run(["git", "-C", ROOT, *cmd], capture_output=True, text=True, check=True).stdout

    if rev:
        commit = git("rev-parse", rev).strip()
        dest = os.path.join(work, "tdcompat-src")
        os.makedirs(dest)
        archive = subprocess.run(["git", "-C", ROOT, "archive", commit, "tdcompat"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", dest], input=archive.stdout, check=True)
        return dest, commit
    try:
        head = git("rev-parse", "HEAD").strip()
        dirty = bool(git("status", "--porcelain", "--", "tdcompat").strip())
    except (OSError, subprocess.CalledProcessError):
        return ROOT, "unknown"
    return ROOT, head + ("+dirty" if dirty else "")


def git_blob(path: str) -> str:
    """The file's git blob id (what ``git hash-object`` prints): which exact file a run used."""
    import hashlib

    data = open(path, "rb").read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()

FILES = ("test_dicts.py", "test_functions.py", "test_misc.py", "test_repros.py")

# Which tests run: per file, "all" or a rule on the test function's name / source (regular expressions).
_FAMILY_NAME = r"dict|mapping|ordered|user_?dict|__dict__|dunder|vars|setattr|delattr|attr_proxy|module_attr"
_FAMILY_SOURCE = (
    r"\bMutableMapping\b|\bUserDict\b|\bOrderedDict\b|class \w+\(\s*(dict|collections\.OrderedDict|"
    r"collections\.UserDict)\s*\)|\.__dict__\b|\bvars\(|__setattr__|__delattr__|\bdelattr\(|\bsetattr\("
)
SELECT = {
    "test_dicts.py": "all",
    "test_functions.py": {"name": _FAMILY_NAME, "source": _FAMILY_SOURCE},
    "test_misc.py": {"name": _FAMILY_NAME, "source": _FAMILY_SOURCE},
    "test_repros.py": {"name": _FAMILY_NAME, "source": _FAMILY_SOURCE},
}

# Families, first match wins. Each rule: family, in_scope (a tdcompat family of issue 27/28 or not), and
# any of "class" / "name" / "source": a regular expression or a list of them (all given ones must match).
FAMILIES = [
    # out of scope (issue 28: listed with counts, not asked for)
    ("graph-canonicalization", False, {"name": r"canonical|joint_pass|_joint_|sync_decision"}),
    ("dict-view-set-ops", False, {"name": r"keys_binop|items_binop|inplace_binop|cross_type_|view_iand|items_cmp"}),
    ("mappingproxy", False, {"name": r"mapping_proxy|view_mapping"}),
    # issue 27: __dict__ / vars()
    ("dunder-dict", True, {"source": r"\.__dict__\b|\bvars\("}),
    ("dunder-dict", True, {"name": r"dunder_dict|__dict__|vars"}),
    # issue 28
    ("module-attributes", True, {"source": r"_ModuleStackTracer|AttrProxy|proxy_type"}),
    ("module-attributes", True, {"source": [r"nn\.Module", r"__setattr__|__delattr__|\bdelattr\(|\bsetattr\(|"
                                                           r"\bdel self\.\w+"]}),
    ("dict-over-mappings", True, {"name": r"update|binop_or|binop_ior|builtin_or|builtin_ior|cmp_or|cmp_ior|"
                                          r"union_result|inplace_union|construct_from_mapping|construction_from|"
                                          r"from_mapping"}),
    ("mapping-built-in-region", True, {"name": r"instantiation|initialization_in_graph|construct_user_dict|"
                                               r"udf_dict_reconstruction|subclass_local|subclass_setitem|"
                                               r"newly_constructed"}),
    ("mutable-mapping-methods", True, {"class": r"DictSubclassMethodsTests|OrderedDictSubclassOverload"}),
    ("mutable-mapping-methods", True, {"name": r"subclass|overridden_get_item|custom_iter|custom_keys|dotdict|"
                                               r"user_?dict|mutable_?mapping"}),
    ("mutable-mapping-methods", True, {"source": r"\bMutableMapping\b|\bUserDict\b|class \w+\(\s*(dict|"
                                                 r"collections\.OrderedDict|OrderedDict|collections\.UserDict)\s*\)"}),
    # the rest: plain dict / OrderedDict / defaultdict behaviour Dynamo owns, and unittest-assertion semantics
    ("unittest-exceptions", False, {"name": r"raises"}),
    ("ordered-dict", False, {"class": r"OrderedDict"}),
    ("plain-dict", False, {}),
]
IN_SCOPE = {family: scope for family, scope, _ in FAMILIES}
FAMILY_ORDER = list(dict.fromkeys(family for family, _, _ in FAMILIES))

# Failures that are the test utilities' own, whatever the release (regular expressions on the message).
HARNESS_MESSAGES = [
    r"All pt2 loggers should only have at most two handlers",  # logging_utils.LoggingTestCase's own check
]

OUTCOMES = ("passed", "failed", "error", "skipped", "harness-incompatible")


# ---------------------------------------------------------------------------------------------------------------
# The test files' functions, from their AST (no import): class -> {name: source}, with the bases in the file.


def file_functions(path: str) -> dict:
    """{class: {"bases": [...], "tests": {name: source}}} of one test file."""
    text = open(path, encoding="utf-8").read()
    tree = ast.parse(text)
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            tests = {}
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    tests[item.name] = ast.get_source_segment(text, item) or ""
            bases = [b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases]
            classes[node.name] = {"bases": bases, "tests": tests}
    return classes


def resolve(classes: dict, cls: str, name: str):
    """(defining function name, source) of test ``name`` collected from class ``cls``: the longest function
    name that is the test's name or its prefix (parametrized tests add ``_<param>``), looked up along the
    class's bases within the file."""
    seen, order = set(), [cls]
    while order:
        current = order.pop(0)
        if current in seen or current not in classes:
            continue
        seen.add(current)
        tests = classes[current]["tests"]
        best = max((t for t in tests if name == t or name.startswith(t + "_")), key=len, default=None)
        if best is not None:
            return best, tests[best]
        order.extend(classes[current]["bases"])
    return name, ""


def _match(rule: dict, cls: str, name: str, source: str) -> bool:
    checks = {"class": cls, "name": name, "source": source}
    return all(re.search(pattern, checks[key]) for key, patterns in rule.items()
               for pattern in ([patterns] if isinstance(patterns, str) else patterns))


def selected(file: str, cls: str, base: str, source: str) -> bool:
    rule = SELECT.get(file)
    if rule == "all":
        return True
    if not rule:
        return False
    return bool(re.search(rule["name"], base) or re.search(rule["source"], source))


def family_of(cls: str, base: str, source: str) -> str:
    for family, _, rule in FAMILIES:
        if _match(rule, cls, base, source):
            return family
    return "plain-dict"


# ---------------------------------------------------------------------------------------------------------------
# The pytest plugin, written next to the copied test files. It reads its settings from UPSTREAM_TESTS_CONFIG.

PLUGIN = r'''
import functools, json, os, re, signal, sys, time, traceback

CONFIG = json.load(open(os.environ["UPSTREAM_TESTS_CONFIG"]))
RESULTS = {}
SHIMS = []
NATIVE_TRACE_UNITTEST = None


def _add_config_key(cfg, name, default):
    """A config key an old torch lacks, added with the value meaning 'feature absent' (tests read it)."""
    try:
        getattr(cfg, name)
        return False
    except AttributeError:
        pass
    mod = sys.modules[type(cfg).__module__]
    if hasattr(mod, "_ConfigEntry"):
        cfg._config[name] = mod._ConfigEntry(mod.Config(default=default))
    else:
        cfg._allowed_keys.add(name)
        cfg._config[name] = default
        if isinstance(getattr(cfg, "_default", None), dict):
            cfg._default[name] = default
    return True


def _make_dynamo_test(fn=None):
    """Minimal make_dynamo_test (as in torch 2.8's common_utils): run the test body eagerly, then under
    optimize_assert (fullgraph) once."""
    from torch._dynamo.testing import CompileCounter, optimize_assert, reset

    if fn is None:
        return lambda fn: _make_dynamo_test(fn)

    @functools.wraps(fn)
    def test_fn(self, **kwargs):
        def dummy():
            fn(self, **kwargs)

        dummy()
        reset()
        optimize_assert(CompileCounter())(dummy)()
        reset()

    return test_fn


def _install_shims():
    global NATIVE_TRACE_UNITTEST
    import torch
    import torch._dynamo.config as config
    import torch._dynamo.utils as dyn_utils
    import torch.testing._internal.common_utils as cu

    NATIVE_TRACE_UNITTEST = hasattr(config, "enable_trace_unittest")
    maker = getattr(cu, "make_dynamo_test", None)
    if maker is None:
        maker = _make_dynamo_test
        SHIMS.append("common_utils.make_dynamo_test")

    def marked(fn=None):
        """The release's make_dynamo_test (or the shim), its tests marked: the harness rule needs to know them."""
        if fn is None:
            return lambda fn: marked(fn)
        test_fn = maker(fn)
        test_fn._upstream_make_dynamo_test = True
        return test_fn

    cu.make_dynamo_test = marked
    # decorators the newest files import that a release lacks (or dropped): identity, they only tune a test
    for name in ("disable_translation_validation_if_dynamic_shapes",):
        if not hasattr(cu, name):
            setattr(cu, name, lambda fn: fn)
            SHIMS.append("common_utils." + name)
    if not hasattr(dyn_utils, "dict_items"):
        dyn_utils.dict_items = type({}.items())
        SHIMS.append("torch._dynamo.utils.dict_items")
    for key in ("enable_trace_unittest", "debug_force_nested_calls"):
        if _add_config_key(config, key, False):
            SHIMS.append("torch._dynamo.config." + key)


def pytest_configure(config):
    if CONFIG["mode"] in ("tdcompat", "disabled"):
        import tdcompat  # noqa: F401  (patches at Dynamo import; "disabled": TDCOMPAT_DISABLE=*)
    _install_shims()


def pytest_collection_modifyitems(session, config, items):
    if CONFIG["selected"] is None:  # the collection pass
        return
    keep, drop = [], []
    for item in items:
        (keep if item.nodeid in CONFIG["selected"] else drop).append(item)
    items[:] = keep
    config.hook.pytest_deselected(items=drop)


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout("per-test timeout (%ss)" % CONFIG["timeout"])


import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(CONFIG["timeout"]))
    try:
        yield
    finally:
        signal.alarm(0)


HARNESS_MODULES = ("torch._dynamo.testing", "torch._dynamo.test_case", "torch.testing._internal")


def _harness(item, excinfo):
    """Why this failure is the harness's, or None."""
    exc = excinfo.value
    text = str(exc)
    if isinstance(exc, (ImportError, AttributeError)) and any(m in text for m in HARNESS_MODULES):
        return "missing test utility: " + text.splitlines()[0][:200] if text else "missing test utility"
    fn = getattr(item, "function", None) or getattr(getattr(item, "obj", None), "__func__", None)
    uses_mdt = getattr(fn, "_upstream_make_dynamo_test", False)
    if uses_mdt and not NATIVE_TRACE_UNITTEST and re.search(r"unittest|case\.py", text):
        return "make_dynamo_test on a torch that cannot trace unittest assertions"
    for pattern in CONFIG["harness_messages"]:
        if re.search(pattern, text):
            return "test utility: " + pattern
    return None


def _kind(excinfo):
    """graph-break (Dynamo's Unsupported), assertion (the test's own check failed: a result, guard count or
    message differs; raised outside torch's compiler packages) or error (anything else, Dynamo-internal
    assertions included)."""
    exc = excinfo.value
    try:
        from torch._dynamo.exc import Unsupported
        if isinstance(exc, Unsupported):
            return "graph-break"
    except ImportError:
        pass
    if isinstance(exc, AssertionError):
        where = str(excinfo.traceback[-1].path).replace(os.sep, "/")
        internal = ("/torch/_dynamo/", "/torch/_inductor/", "/torch/_functorch/", "/torch/fx/", "/torch/_subclasses/")
        if not any(part in where for part in internal):
            return "assertion"
    return "error"


def _one_line(excinfo):
    exc = excinfo.value
    text = " ".join(str(exc).split()).split(" To execute this test, run")[0]
    return (type(exc).__name__ + ": " + text)[:300]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    entry = RESULTS.setdefault(item.nodeid, {"outcome": "passed", "message": "", "duration": 0.0})
    entry["duration"] = round(entry["duration"] + rep.duration, 3)
    if rep.when == "call" and hasattr(rep, "wasxfail"):
        entry["outcome"], entry["message"] = "skipped", "expected failure (unittest.expectedFailure)"
        return
    if rep.skipped and entry["outcome"] == "passed":
        entry["outcome"] = "skipped"
        entry["message"] = str(rep.longrepr[-1])[:300] if isinstance(rep.longrepr, tuple) else ""
    elif rep.failed and entry["outcome"] in ("passed", "skipped"):
        why = _harness(item, call.excinfo) if call.excinfo is not None else None
        if why:
            entry["outcome"], entry["message"] = "harness-incompatible", why + " | " + _one_line(call.excinfo)
        else:
            entry["outcome"] = "failed" if rep.when == "call" else "error"
            entry["message"] = _one_line(call.excinfo) if call.excinfo is not None else str(rep.longrepr)[:300]
            entry["exception"] = type(call.excinfo.value).__module__ + "." + type(call.excinfo.value).__name__ \
                if call.excinfo is not None else ""
            entry["kind"] = _kind(call.excinfo) if call.excinfo is not None else "error"


def pytest_collectreport(report):
    if report.failed:
        RESULTS.setdefault("<collect>:" + report.nodeid, {"outcome": "harness-incompatible",
                           "message": str(report.longrepr).strip().splitlines()[-1][:300], "duration": 0.0})


def pytest_sessionfinish(session, exitstatus):
    import torch
    info = {"torch": torch.__version__, "python": sys.version.split()[0], "mode": CONFIG["mode"],
            "shims": SHIMS, "tdcompat_imported": "tdcompat" in sys.modules, "results": RESULTS}
    if "tdcompat" in sys.modules:
        import tdcompat
        try:
            info["tdcompat_applied"] = sorted(s.name for s in tdcompat.status() if s.state.value == "applied")
        except Exception as exc:  # noqa: BLE001  (status() is informative only)
            info["tdcompat_applied"] = "status() failed: %r" % (exc,)
    with open(CONFIG["raw_out"], "w") as fh:
        json.dump(info, fh)
'''


# ---------------------------------------------------------------------------------------------------------------


def run(args) -> int:
    tests_dir = os.path.abspath(os.path.expanduser(args.tests_dir))
    present = [f for f in FILES if os.path.exists(os.path.join(tests_dir, f))]
    if not present:
        print(f"no upstream test file in {tests_dir} (expected some of {', '.join(FILES)})", file=sys.stderr)
        return 2
    python = os.path.expanduser(args.python) if args.python else sys.executable
    work = tempfile.mkdtemp(prefix="upstream_tests-")
    try:
        for name in os.listdir(tests_dir):  # the files and their helpers (test_misc.py's _test_misc_part*.py, ...)
            if name.endswith(".py"):
                shutil.copy(os.path.join(tests_dir, name), os.path.join(work, name))
        with open(os.path.join(work, "upstream_plugin.py"), "w") as fh:
            fh.write(PLUGIN)
        with open(os.path.join(work, "pytest.ini"), "w") as fh:
            fh.write("[pytest]\naddopts = -p no:cacheprovider\n")
        raw_out = os.path.join(work, "raw.json")
        # Two passes: collect (with the shims, no test runs), select the node ids here (a parametrized test's
        # name is its function's plus a suffix: resolve() finds the function), then run only those.
        config = {"mode": args.mode, "timeout": args.timeout, "harness_messages": HARNESS_MESSAGES,
                  "raw_out": os.path.join(work, "collect.json"), "selected": None}
        env = dict(os.environ)
        tdcompat_root, tdcompat_rev = tdcompat_source(args.tdcompat_rev, work)
        env["PYTHONPATH"] = os.pathsep.join([work, tdcompat_root] + [p for p in [env.get("PYTHONPATH")] if p])
        env.pop("TDCOMPAT_DISABLE", None)
        if args.mode == "disabled":
            env["TDCOMPAT_DISABLE"] = "*"
        env["UPSTREAM_TESTS_CONFIG"] = os.path.join(work, "config.json")
        with open(env["UPSTREAM_TESTS_CONFIG"], "w") as fh:
            json.dump(config, fh)
        collect = subprocess.run([python, "-m", "pytest", "--collect-only", "-q", "-p", "upstream_plugin",
                                  "-p", "no:randomly",
                                  "-c", "pytest.ini", *present], cwd=work, env=env, capture_output=True,
                                 text=True, timeout=1800)
        collected = [line.strip() for line in collect.stdout.splitlines() if "::" in line]
        selected_ids, families = [], {}
        for nodeid in collected:
            file, cls, name = nodeid.split("::")[:3]
            classes = _classes_cache(work, file)
            base, source = resolve(classes, cls, name)
            if selected(file, cls, base, source):
                selected_ids.append(nodeid)
                families[nodeid] = (file, cls, base, family_of(cls, base, source))
        if args.k:
            selected_ids = [n for n in selected_ids if re.search(args.k, n)]
        if not collected:
            print(collect.stdout[-3000:], collect.stderr[-3000:], file=sys.stderr)
            return 2
        config["selected"], config["raw_out"] = selected_ids, raw_out
        with open(env["UPSTREAM_TESTS_CONFIG"], "w") as fh:
            json.dump(config, fh)
        print(f"{python}: {len(selected_ids)} of {len(collected)} collected tests selected, mode {args.mode}",
              flush=True)
        start = time.time()
        cmd = [python, "-m", "pytest", "-q", "-p", "upstream_plugin", "-p", "no:randomly", "-c", "pytest.ini",
               "--tb=no", "-rN", "-p", "no:logging", "--continue-on-collection-errors", *present]
        proc = subprocess.run(cmd, cwd=work, env=env, timeout=args.run_timeout, capture_output=True, text=True)
        tail = proc.stdout.strip().splitlines()[-1:] or proc.stderr.strip().splitlines()[-3:]
        print("\n".join(tail), flush=True)
        if not os.path.exists(raw_out):
            print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
            return 2
        raw = json.load(open(raw_out))
        tests = {}
        for nodeid in selected_ids:
            file, cls, base, family = families[nodeid]
            entry = raw["results"].get(nodeid)
            if entry is None:  # a collection error of the file: nothing of it ran
                collect_err = next((v for k, v in raw["results"].items() if k.startswith("<collect>:" + file)),
                                   None)
                entry = {"outcome": "harness-incompatible",
                         "message": (collect_err or {}).get("message", "not run")}
            record = {"family": family, "outcome": entry["outcome"]}
            if entry["outcome"] != "passed" and entry.get("message"):
                record["message"] = normalize_message(entry["message"])
            if entry.get("exception"):
                record["exception"] = entry["exception"]
            if entry.get("kind"):
                record["kind"] = entry["kind"]
            tests[nodeid] = record
        result = {
            "torch": raw["torch"], "python": raw["python"], "mode": args.mode,
            "tdcompat_imported": raw["tdcompat_imported"], "tdcompat_applied": raw.get("tdcompat_applied"),
            "shims": raw["shims"], "timeout_s": args.timeout, "seconds": round(time.time() - start, 1),
            "tdcompat_rev": tdcompat_rev if args.mode != "native" else None,
            "upstream": {f: {"path": "test/dynamo/" + f, "commit": UPSTREAM.get(f, {}).get("commit", "unrecorded"),
                             "blob": git_blob(os.path.join(tests_dir, f)),
                             "blob_expected": UPSTREAM.get(f, {}).get("blob", "unrecorded")} for f in present},
            "counts": {o: sum(1 for t in tests.values() if t["outcome"] == o) for o in OUTCOMES},
            "tests": tests,
        }
        if args.mode == "native" and raw["tdcompat_imported"]:
            print("native run imported tdcompat: not torch as shipped", file=sys.stderr)
            return 2
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        write_result(args.out, result)
        print(f"{raw['torch']} {args.mode}: {result['counts']} -> {args.out} ({result['seconds']} s)")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept", work)


_CLASSES = {}


def _classes_cache(work: str, file: str) -> dict:
    """The classes of ``file``, then those of the other files of the directory (a test class may take its
    tests from mixins in helper files, as test_misc.py does from _test_misc_part*.py)."""
    if file not in _CLASSES:
        classes = {}
        for name in sorted(os.listdir(work)):
            if name.endswith(".py") and name != file and name != "upstream_plugin.py":
                try:
                    helper = file_functions(os.path.join(work, name))
                except (SyntaxError, UnicodeDecodeError):
                    continue
                for cls, info in helper.items():
                    classes.setdefault(cls, info)
        classes.update(file_functions(os.path.join(work, file)))
        _CLASSES[file] = classes
    return _CLASSES[file]


# ---------------------------------------------------------------------------------------------------------------


def _version_key(version: str) -> tuple:
    return tuple(int(p) for p in re.findall(r"\d+", version.split("+")[0])[:3])


def report(directory: str, reference: str = "2.15") -> str:
    runs = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".json"):
            data = json.load(open(os.path.join(directory, name)))
            runs[(data["torch"].split("+")[0], data["mode"])] = data
    ref_key = next((k for k in runs if k[1] == "native" and k[0].startswith(reference)), None)
    if ref_key is None:
        return f"no native run of torch {reference} in {directory}"
    ref = runs[ref_key]["tests"]
    ref_pass = {t for t, r in ref.items() if r["outcome"] == "passed"}
    releases = sorted({k[0] for k in runs}, key=_version_key)
    out = []
    upstream = runs[ref_key]["upstream"]
    out.append("Upstream files: " + ", ".join(f"{v['path']}@{v['commit'][:12]}" for v in upstream.values()))
    out.append(f"Reference: {len(ref_pass)} of {len(ref)} selected tests pass natively on torch {ref_key[0]}.")
    out.append("")
    out.append("Per release and family: of the tests that pass natively on the reference, how many pass without")
    out.append("tdcompat / with tdcompat (harness-incompatible ones, which cannot run on that release, in brackets;")
    out.append("'assert N' = N of the failures with tdcompat are the test's own assertion failing (a result, guard")
    out.append("count or message that differs from what the test expects) rather than a graph break or an error).")
    out.append("")
    header = f"| family | in scope | on {ref_key[0]} | " + " | ".join(releases) + " |"
    out.append(header)
    out.append("|" + "---|" * (3 + len(releases)))
    for family in FAMILY_ORDER + ["all"]:
        fam_tests = {t for t in ref_pass if family == "all" or ref[t]["family"] == family}
        if not fam_tests:
            continue
        cells = []
        for release in releases:
            nat, tdc = runs.get((release, "native")), runs.get((release, "tdcompat"))

            def count(run, outcome, fam_tests=fam_tests):
                """A test the release did not even collect (its file fails to import there) is
                harness-incompatible."""
                if run is None:
                    return None
                absent = {"outcome": "harness-incompatible"}
                return sum(1 for t in fam_tests if run["tests"].get(t, absent).get("outcome") == outcome)

            n, w = count(nat, "passed"), count(tdc, "passed")
            h = count(nat, "harness-incompatible") if nat else count(tdc, "harness-incompatible")
            wrong = None
            if tdc is not None:
                wrong = sum(1 for t in fam_tests if tdc["tests"].get(t, {}).get("outcome") == "failed"
                            and tdc["tests"][t].get("kind") == "assertion")
            cell = f"{'-' if n is None else n} / {'-' if w is None else w}"
            if h:
                cell += f" [{h}]"
            if wrong:
                cell += f" assert {wrong}"
            cells.append(cell)
        scope = "all" if family == "all" else ("yes" if IN_SCOPE.get(family) else "no")
        out.append(f"| {family} | {scope} | {len(fam_tests)} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("Never-worse violations: tests that pass without tdcompat and fail with it (same release):")
    any_violation = False
    for release in releases:
        nat, tdc = runs.get((release, "native")), runs.get((release, "tdcompat"))
        if not nat or not tdc:
            continue
        for t, r in sorted(nat["tests"].items()):
            w = tdc["tests"].get(t)
            if r["outcome"] == "passed" and w and w["outcome"] in ("failed", "error"):
                any_violation = True
                out.append(f"- {release} {t} [{w['family']}]: {w.get('message', '')[:240]}")
    if not any_violation:
        out.append("- none")
    out.append("")
    out.append("Failures tdcompat turns from a graph break or an error into an assertion failure (a compiled result")
    out.append("the test finds wrong), same release:")
    any_turned = False
    for release in releases:
        nat, tdc = runs.get((release, "native")), runs.get((release, "tdcompat"))
        if not nat or not tdc:
            continue
        for t, r in sorted(nat["tests"].items()):
            w = tdc["tests"].get(t)
            if (r["outcome"] in ("failed", "error") and w and w["outcome"] == "failed"
                    and w.get("kind") == "assertion" and r.get("kind") != "assertion"):
                any_turned = True
                out.append(f"- {release} {t} [{w['family']}]: {w.get('message', '')[:240]}")
    if not any_turned:
        out.append("- none")
    out.append("")
    out.append("Tests tdcompat makes pass (fail without it, pass with it, same release):")
    for release in releases:
        nat, tdc = runs.get((release, "native")), runs.get((release, "tdcompat"))
        if not nat or not tdc:
            continue
        fixed = [t for t, r in sorted(tdc["tests"].items())
                 if r["outcome"] == "passed" and nat["tests"].get(t, {}).get("outcome") in ("failed", "error")]
        names = ", ".join(t.split("::", 1)[1] for t in fixed)
        out.append(f"- {release}: {len(fixed)}" + (f": {names}" if fixed else ""))
    out.append("")
    out.append("In-scope tests that pass on the reference and fail somewhere with tdcompat: per release, with")
    out.append("tdcompat (native in brackets when it differs). p = pass, B = graph break, A = the test's assertion,")
    out.append("E = error, H = harness-incompatible, - = not run.")
    out.append("")
    short = {"passed": "p", "harness-incompatible": "H", "skipped": "s"}

    def mark(entry):
        if not entry:
            return "-"
        if entry["outcome"] in short:
            return short[entry["outcome"]]
        return {"graph-break": "B", "assertion": "A"}.get(entry.get("kind", ""), "E")

    old = [r for r in releases if r != ref_key[0]]
    out.append("| test | family | " + " | ".join(old) + " |")
    out.append("|" + "---|" * (2 + len(old)))
    for family in FAMILY_ORDER:
        if not IN_SCOPE.get(family):
            continue
        for t in sorted(ref_pass):
            if ref[t]["family"] != family:
                continue
            cells, failing = [], False
            for release in old:
                tdc, nat = runs.get((release, "tdcompat")), runs.get((release, "native"))
                w = mark(tdc["tests"].get(t) if tdc else None)
                n = mark(nat["tests"].get(t) if nat else None)
                failing |= w in ("B", "A", "E")
                cells.append(w if n == w else f"{w} ({n})")
            if failing:
                out.append(f"| {t.split('::', 1)[1]} | {family} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("Tests that pass on the reference and fail with tdcompat (by release, in-scope families):")
    for release in releases:
        tdc = runs.get((release, "tdcompat"))
        if not tdc or release == ref_key[0]:
            continue
        failing = [t for t in sorted(ref_pass) if IN_SCOPE.get(ref[t]["family"])
                   and tdc["tests"].get(t, {}).get("outcome") in ("failed", "error")]
        out.append(f"- {release}: {len(failing)}")
        for t in failing:
            out.append(f"  - {t} [{ref[t]['family']}]: {tdc['tests'][t].get('message', '')[:200]}")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests-dir", help="directory with upstream test/dynamo files")
    parser.add_argument("--python", help="interpreter of the environment to test (default: this one)")
    parser.add_argument("--mode", choices=["native", "tdcompat", "disabled"], default="native",
                        help="native: tdcompat never imported (torch as shipped); tdcompat: imported first; "
                        "disabled: imported with TDCOMPAT_DISABLE=* (to check that this is inert)")
    parser.add_argument("--out", help="JSON of per-test outcomes")
    parser.add_argument("--timeout", type=int, default=120, help="per-test timeout, seconds")
    parser.add_argument("--tdcompat-rev", help="import tdcompat as of this commit of the checkout (exported to a "
                        "temporary directory) instead of the working tree")
    parser.add_argument("--run-timeout", type=int, default=5400, help="timeout of the whole pytest run, seconds")
    parser.add_argument("-k", help="only node ids matching this regular expression (for debugging)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--report", metavar="DIR", help="print the table of the JSONs in DIR")
    parser.add_argument("--reference", default="2.15", help="the release whose native passes are the reference")
    args = parser.parse_args(argv)
    if args.report:
        print(report(args.report, args.reference))
        return 0
    if not args.tests_dir or not args.out:
        parser.error("--tests-dir and --out are required (or --report DIR)")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
