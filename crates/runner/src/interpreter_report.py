"""What passk asks an interpreter about itself, run as `python -I -S -c <this> NAME...`
with the packages allowed with --allow-package. It prints one JSON object.

-S keeps `site` from running at start-up, so that `sys.path` is first the standard
library's alone; `site.main()` then adds what start-up would have added (site-packages
and whatever their .pth files name): the packages, which the sandbox hides. Written for
old interpreters too, so that one too old is reported as such."""

import json
import os
import sys

report = {"executable": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3]}
if sys.version_info < (3, 9):
    print(json.dumps(report))
    raise SystemExit(0)

import site
import sysconfig

stdlib = [os.path.realpath(entry) for entry in sys.path if entry]
site.main()


def directory(path):
    """A path entry's directory: an archive on the path (an egg) is hidden with the
    directory it is in."""
    return path if os.path.isdir(path) else os.path.dirname(path)


def inside(path, directories):
    return any(path == top or path.startswith(top.rstrip(os.sep) + os.sep) for top in directories)


packages = set(site.getsitepackages())
packages.add(site.getusersitepackages())
packages.update(sysconfig.get_paths()[name] for name in ("purelib", "platlib"))
packages.update(directory(entry) for entry in sys.path if entry and os.path.realpath(entry) not in stdlib)
packages = sorted({os.path.realpath(path) for path in packages} - set(stdlib))


def top_level(path):
    """The entry of a package directory that `path` is, or is in, as that directory's
    real path joined with the entry's name (which may be a link)."""
    real = os.path.realpath(os.path.dirname(path))
    for top in packages:
        if real == top:
            return os.path.join(top, os.path.basename(path))
        if inside(real, [top]):
            first = os.path.relpath(real, top).split(os.sep)[0]
            return os.path.join(top, first)
    return None


def importlib_metadata():
    """importlib.metadata, imported only when a package is asked about: it takes a
    quarter of the report's time, paid by every run."""
    import importlib.metadata

    return importlib.metadata


def names_of(distribution):
    """The import names a distribution provides: its top_level.txt, or the first part of
    each file it installed (numpy, numpy.libs and numpy.py all give numpy)."""
    names = set((distribution.read_text("top_level.txt") or "").split())
    for file in distribution.files or ():
        if file.parts and file.parts[0] not in ("..", "__pycache__"):
            names.add(file.parts[0].split(".")[0])
    return names


def not_an_import_name(name):
    """Why `name` cannot be imported: not installed, or (PyYAML) the name of a
    distribution, installed, whose import names are others (yaml)."""
    try:
        distribution = importlib_metadata().distribution(name)
    except (importlib_metadata().PackageNotFoundError, ValueError):
        return "not installed"
    provides = sorted(n for n in names_of(distribution) if n.isidentifier() and not n.startswith("_"))
    if not provides:
        return "not installed"
    instead = " ".join(f"--allow-package {provided}" for provided in provides)
    return f"the name a distribution is installed by, not the name it is imported by: give {instead}"


def allowed(name):
    """Every file and directory of the package `name` in the package directories: its
    own, and those its distribution installed beside it (the libraries a wheel vendors
    in NAME.libs, compiled extensions, its metadata)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return {"name": name, "error": not_an_import_name(name)}
    places = list(spec.submodule_search_locations or ()) or ([spec.origin] if spec.has_location else [])
    if not any(inside(os.path.realpath(place), packages) for place in places):
        return {"name": name, "error": "part of the standard library, which candidates always see"}
    entries = {top_level(place) for place in places}
    for distribution in importlib_metadata().distributions():
        if name not in names_of(distribution):
            continue
        metadata = getattr(distribution, "_path", None)
        if metadata is not None:
            entries.add(top_level(str(metadata)))
        for file in distribution.files or ():
            located = str(distribution.locate_file(file))
            if file.parts and file.parts[0] == "__pycache__":
                # The shared cache holds every module's compiled code: only this
                # distribution's own files are named.
                entries.add(os.path.join(os.path.realpath(os.path.dirname(located)), os.path.basename(located)))
            elif file.parts and file.parts[0] != "..":
                entries.add(top_level(located))
    entries.discard(None)
    return {"name": name, "paths": sorted(path for path in entries if os.path.lexists(path))}


report.update(
    installation=sorted(
        {
            sys.prefix,
            sys.exec_prefix,
            sys.base_prefix,
            sys.base_exec_prefix,
            os.path.dirname(sys.executable),
            os.path.dirname(os.path.realpath(sys.executable)),
        }
        | {path for path in stdlib if os.path.isdir(path)}
    ),
    stdlib=stdlib,
    packages=packages,
    allowed=[allowed(name) for name in sys.argv[1:]],
)
print(json.dumps(report))
