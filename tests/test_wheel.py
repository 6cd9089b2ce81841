"""A wheel renders a site: the templates and the generator's word lists are package data.

The wheel is built from a copy of the sources (so the build writes nothing
into the checkout), installed without dependencies into a fresh virtual
environment outside the repository, and run from a folder outside the
repository: `reporter route` on the fixture workspace, then `reporter
render`. The fresh environment sees the running environment's dependency
folders through a `.pth` file; their own `.pth` files (the checkout's
editable-install finder among them) are never processed, so `reporter`
can only come from the wheel, and the test checks that it did.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = ROOT / "tests" / "fixtures" / "site_workspace"
# Signs that an isolated build could not fetch its backend (no network, no index), as opposed to a broken package.
_NO_BACKEND = ("install build dependencies did not run successfully", "No matching distribution found")

pytestmark = [pytest.mark.skipif(find_spec("pip") is None, reason="pip is not installed: no wheel can be built"),
              pytest.mark.slow]


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


def _version(dist: str) -> tuple[int, ...]:
    """An installed distribution's (major, minor), read without importing it; () when absent."""
    try:
        return tuple(int(x) for x in metadata.version(dist).split(".")[:2] if x.isdigit())
    except metadata.PackageNotFoundError:
        return ()


def _local_backend() -> bool:
    """setuptools>=77, which reads the SPDX `license` string and writes wheels itself (bdist_wheel built in)."""
    version = _version("setuptools")  # not imported: that would patch distutils in this process
    return version >= (77, 0)


def _build_wheel(tmp: Path) -> Path:
    """A wheel of the project, built from a copy of pyproject.toml, README.md and reporter/."""
    src, dist = tmp / "src", tmp / "dist"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "reporter", src / "reporter", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # Without a local backend (a fresh .venv has none) pip fetches setuptools into an isolated build env.
    isolation = ["--no-build-isolation"] if _local_backend() else []
    done = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", *isolation, "-w", str(dist), str(src)],
                cwd=tmp)
    if done.returncode and not isolation and any(sign in done.stdout + done.stderr for sign in _NO_BACKEND):
        pytest.skip("cannot build a wheel: no setuptools>=77 here and pip could not fetch one:\n" + done.stderr[-800:])
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(src)  # from here on, the only other copy of the templates is the checkout's
    (wheel,) = dist.glob("reporter-*.whl")
    return wheel


def _dependency_paths() -> list[str]:
    """The running environment's site-packages folders that do not hold `reporter` itself."""
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *sys.path}
    return sorted(p for p in paths if p and Path(p).name in ("site-packages", "dist-packages")
                  and Path(p).is_dir() and not (Path(p) / "reporter").exists())


def _fresh_env(tmp: Path, wheel: Path) -> tuple[Path, dict[str, str]]:
    """A new virtual environment with the wheel installed, and the environment variables to run it with."""
    home = tmp / "fresh"
    pip_can_target = _version("pip") >= (22, 3)  # `pip --python` installs into another environment
    venv.create(home, with_pip=not pip_can_target, symlinks=True)
    python = home / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp)
    site = Path(purelib.stdout.strip())
    (site / "reporter_test_dependencies.pth").write_text("".join(f"{p}\n" for p in _dependency_paths()))
    pip = [sys.executable, "-m", "pip", "--python", str(python)] if pip_can_target else [str(python), "-m", "pip"]
    done = _run([*pip, "install", "--no-deps", "--no-index", "--quiet", str(wheel)], cwd=tmp)
    assert done.returncode == 0, done.stdout + done.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "VIRTUAL_ENV"}
    env.update(PATH=f"{home / 'bin'}{os.pathsep}{env.get('PATH', '')}", PYTHONNOUSERSITE="1", VIRTUAL_ENV=str(home))
    return home, env


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


PROBE = """
import json, reporter
from reporter.site import env
from reporter.example import words
print(json.dumps({"reporter": reporter.__file__, "words": words.__file__,
                  "html": env.html_env().get_template("home.html").filename,
                  "md": env.md_env().get_template("home.md").filename,
                  "static": str(env.TEMPLATES / "static" / "style.css")}))
"""


def test_an_installed_wheel_routes_and_renders_a_site(tmp_path):
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    data = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "reporter" / "templates").rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts]
    assert "reporter/templates/html/base.html" in data
    missing = [name for name in [*data, "reporter/example/words.json", "reporter/py.typed"] if name not in names]
    assert not missing, f"package data missing from the wheel (see pyproject.toml): {missing}"

    home, env = _fresh_env(tmp_path, wheel)
    work = tmp_path / "work"
    shutil.copytree(WORKSPACE, work, ignore=shutil.ignore_patterns("releases", "site"))

    done = _run([str(home / "bin" / "python"), "-c", PROBE], cwd=work, env=env)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    for what, path in found.items():
        assert Path(path).resolve().is_relative_to(home.resolve()), f"{what} came from {path}, not the wheel"
        assert not Path(path).resolve().is_relative_to(ROOT), f"{what} came from the checkout: {path}"

    reporter = str(home / "bin" / "reporter")
    routed = _run([reporter, "route", "--json"], cwd=work, env=env)
    assert routed.returncode == 0, routed.stderr
    release_id = json.loads(routed.stdout)["release_id"]
    rendered = _run([reporter, "render", "--releases", "releases", "--out", "site", "--quiet"], cwd=work, env=env)
    assert rendered.returncode == 0, rendered.stderr
    site = work / "site"
    for page in ("index.html", "index.md", f"releases/{release_id}/index.html", f"releases/{release_id}/index.md"):
        assert (site / page).is_file(), page
    # The same pages as the checkout renders from the same releases, byte for byte.
    from reporter.build import render_site
    render_site(work / "releases", tmp_path / "from_checkout", progress=False)
    assert _tree(site) == _tree(tmp_path / "from_checkout")

    # The word lists travel too: the installed generator writes a pool.
    generated = _run([str(home / "bin" / "python"), "-m", "reporter.example", "pool.parquet", "--rows", "300",
                      "--quiet"], cwd=work, env=env)
    assert generated.returncode == 0, generated.stderr
    assert (work / "pool.parquet").stat().st_size > 0


@pytest.mark.browser
def test_an_installed_wheel_starts_a_workspace_anywhere_and_builds_it(tmp_path):
    """Issue 37, item 1: from the wheel alone, in an empty folder outside the repository: `reporter build` says
    to run `reporter init` and names the doc; `reporter init` writes a workspace whose `reporter build` succeeds
    at once; `reporter help workspace` prints the doc the wheel ships; the home page opens in headless Chromium."""
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = [f"reporter/docs/{p.relative_to(ROOT / 'docs').as_posix()}" for p in sorted((ROOT / "docs").rglob("*.md"))]
    shipped += [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "reporter" / "starter").rglob("*"))
                if p.is_file()]
    assert "reporter/docs/workspace.md" in shipped and "reporter/starter/routing/reporter.toml" in shipped
    missing = [name for name in shipped if name not in names]
    assert not missing, f"docs or starter files missing from the wheel (see pyproject.toml): {missing}"

    home, env = _fresh_env(tmp_path, wheel)
    env["SOURCE_DATE_EPOCH"] = "1783339200"
    reporter = str(home / "bin" / "reporter")
    work = tmp_path / "anywhere"
    work.mkdir()
    refused = _run([reporter, "build"], cwd=work, env=env)
    assert refused.returncode == 2 and "`reporter init`" in refused.stderr and "docs/workspace.md" in refused.stderr
    assert list(work.iterdir()) == []
    started = _run([reporter, "init"], cwd=work, env=env)
    assert started.returncode == 0, started.stderr
    built = _run([reporter, "build"], cwd=work, env=env)
    assert built.returncode == 0, built.stderr
    assert "routed 20,000 works: release" in built.stdout and "(new)" in built.stdout, built.stdout
    doc = _run([reporter, "help", "workspace"], cwd=work, env=env)
    assert doc.returncode == 0 and doc.stdout == (ROOT / "docs" / "workspace.md").read_text(encoding="utf-8")
    digest = tmp_path / "weekly"
    assert _run([reporter, "init", str(digest), "--digest-only"], cwd=tmp_path, env=env).returncode == 0
    built_digest = _run([reporter, "build"], cwd=digest, env=env)
    assert built_digest.returncode == 0 and "routed nothing" in built_digest.stdout, built_digest.stderr

    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip("no Chromium at /usr/bin/chromium: apt-get install -y chromium (the rest has passed)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright for Python is not installed (the rest has passed)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--headless", "--no-sandbox",
                                                                          "--disable-gpu", "--no-first-run"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((work / "site" / "index.html").as_uri(), wait_until="load")
            assert page.locator("h1").count() == 1 and page.title(), page.content()[:500]
            assert "20,000" in page.inner_text("body")  # the release's works, on the home page
            assert not errors, errors
        finally:
            browser.close()
