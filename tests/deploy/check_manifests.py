"""Checks Kubernetes manifests offline against the Kubernetes API's schema.

Each YAML document is read into the model class of the `kubernetes` client from PyPI
that its apiVersion and kind name (batch/v1 Job -> V1Job), field by field, as the API
server would decode it: a field the class does not have, a value of the wrong type, or
a required field missing is an error, named by its path. No cluster is needed; the
client's models are generated from the API's OpenAPI schema of its release, so the
pinned client (tests/end_to_end/deploy.rs installs it) is the API version checked.

    check_manifests.py [--json OUT] FILE_OR_DIR...

Prints one line per document; exits 1 if any is refused. With --json, writes every
document, as read, to OUT as a JSON list of {"file", "document"}.
"""

import argparse
import datetime
import json
import pathlib
import re
import sys

import kubernetes.client
import yaml

PRIMITIVES = {"str": (str,), "int": (int,), "float": (float, int), "bool": (bool,)}


class Refused(Exception):
    pass


def model_class(api_version, kind):
    """The client's class for apiVersion/kind: apps/v1 Deployment -> V1Deployment."""
    version = api_version.split("/")[-1]
    name = version[0].upper() + version[1:] + kind
    cls = getattr(kubernetes.client, name, None)
    if cls is None:
        raise Refused(f"apiVersion {api_version} kind {kind}: no such API type ({name}) in kubernetes {kubernetes.__version__}")
    return cls


def decode(value, type_name, path):
    """`value` decoded as the schema's `type_name`, or Refused naming `path`."""
    if value is None:
        return None
    list_of = re.fullmatch(r"list\[(.+)\]", type_name)
    if list_of:
        if not isinstance(value, list):
            raise Refused(f"{path}: a list is due, not {value!r}")
        return [decode(item, list_of.group(1), f"{path}[{index}]") for index, item in enumerate(value)]
    dict_of = re.fullmatch(r"dict\(str, (.+)\)", type_name)
    if dict_of:
        if not isinstance(value, dict):
            raise Refused(f"{path}: a map is due, not {value!r}")
        return {key: decode(item, dict_of.group(1), f"{path}.{key}") for key, item in value.items()}
    if type_name == "object":
        # IntOrString and free-form fields: the schema leaves them open.
        return value
    if type_name in PRIMITIVES:
        # bool is an int in Python, never in the API.
        if isinstance(value, bool) and type_name != "bool" or not isinstance(value, PRIMITIVES[type_name]):
            raise Refused(f"{path}: {type_name} expected, not {value!r}")
        return value
    if type_name in ("datetime", "date"):
        if not isinstance(value, (str, datetime.date)):
            raise Refused(f"{path}: {type_name} expected, not {value!r}")
        return value
    cls = getattr(kubernetes.client, type_name)
    if not isinstance(value, dict):
        raise Refused(f"{path}: an object ({type_name}) is due, not {value!r}")
    fields = {json_name: attribute for attribute, json_name in cls.attribute_map.items()}
    arguments = {}
    for key, item in value.items():
        if key not in fields:
            raise Refused(f"{path}.{key}: not a field of {type_name}")
        attribute = fields[key]
        arguments[attribute] = decode(item, cls.openapi_types[attribute], f"{path}.{key}")
    try:
        # The generated constructor refuses a required field left out.
        return cls(**arguments)
    except ValueError as error:
        raise Refused(f"{path}: {type_name}: {error}") from None


def check(file):
    """Every document of `file`, each checked: (document, line) pairs; Refused if not."""
    checked = []
    for index, document in enumerate(yaml.safe_load_all(file.read_text())):
        if document is None:
            continue
        where = f"{file}: document {index + 1}"
        try:
            if not isinstance(document, dict) or "apiVersion" not in document or "kind" not in document:
                raise Refused("a Kubernetes object has apiVersion and kind")
            cls = model_class(document["apiVersion"], document["kind"])
            decode(document, cls.__name__, document["kind"])
        except Refused as error:
            raise Refused(f"{where}: {error}") from None
        name = document.get("metadata", {}).get("name", "")
        checked.append((document, f"ok: {file}: {document['apiVersion']} {document['kind']} {name}"))
    return checked


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json")
    parser.add_argument("paths", nargs="+")
    arguments = parser.parse_args()
    files = []
    for path in map(pathlib.Path, arguments.paths):
        files.extend(sorted(path.glob("*.yaml")) if path.is_dir() else [path])
    if not files:
        sys.exit("check_manifests: no manifests found")
    documents, refused = [], False
    for file in files:
        try:
            for document, line in check(file):
                print(line)
                documents.append({"file": str(file), "document": document})
        except (Refused, yaml.YAMLError) as error:
            print(f"refused: {error}")
            refused = True
    print(f"checked against kubernetes {kubernetes.__version__}'s models")
    if arguments.json:
        pathlib.Path(arguments.json).write_text(json.dumps(documents))
    sys.exit(1 if refused else 0)


if __name__ == "__main__":
    main()
