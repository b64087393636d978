"""C++'s precompiled headers (sandbox/languages.toml's `headers`, programs.py's
with_precompiled): a source that begins with a header's includes is built with the
header in their place, the same program, and g++ really loads the precompiled form
(flags that drifted apart between `compile` and the headers' build would silently cost
every build the parse the header saves).

    python3 -m unittest discover -s tests/interpreter
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import tomllib
except ImportError:  # Python before 3.11: the driver runs there, these tests do not
    tomllib = None

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "sandbox"))
from passk_driver import programs  # noqa: E402


def cpp_program_rule():
    with open(os.path.join(ROOT, "sandbox", "languages.toml"), "rb") as table:
        languages = tomllib.load(table)["language"]
    return next(language for language in languages if language["name"] == "cpp")["program"]


@unittest.skipIf(tomllib is None, "needs Python 3.11's tomllib")
class Rewriting(unittest.TestCase):
    def setUp(self):
        self.rule = {"precompiled": cpp_program_rule()["prebuilt"]["headers"]}

    def test_multipl_e_prompts_lead_with_their_header(self):
        source = "#include<assert.h>\n#include<bits/stdc++.h>\n// doc\nlong f(long x) {\n"
        self.assertEqual(programs.with_precompiled(self.rule, source),
                         '#include "passk-multipl-e.h"\n\n// doc\nlong f(long x) {\n')

    def test_codegeex_includes_split_between_prefix_and_prompt_count_as_one_set(self):
        # CodeGeeX puts before the prompt the includes of its list the prompt lacks.
        prefix = "#include<stdlib.h>\n#include<algorithm>\n#include<climits>\n#include<cstring>\n#include<iostream>\n"
        prompt = ("/*\nDoc.\n*/\n#include<stdio.h>\n#include<vector>\n#include<math.h>\n#include<string>\n"
                  "using namespace std;\nint f(){\n")
        rewritten = programs.with_precompiled(self.rule, prefix + prompt)
        self.assertEqual(rewritten, '#include "passk-codegeex.h"\n\n\n\n\n' + prompt)

    def test_a_header_the_source_does_not_include_is_never_added(self):
        # <iostream> is missing: the codegeex header would declare what the program lacks.
        source = "#include<stdlib.h>\n#include<algorithm>\nint main(){}\n"
        self.assertEqual(programs.with_precompiled(self.rule, source), source)

    def test_spacing_and_leading_comments_are_allowed_and_code_first_is_not(self):
        source = "\n// solution\n#include <bits/stdc++.h>\nusing namespace std;\n"
        self.assertEqual(programs.with_precompiled(self.rule, source),
                         '\n// solution\n#include "passk-stdc++.h"\nusing namespace std;\n')
        unchanged = "#define N 10\n#include <bits/stdc++.h>\n"
        self.assertEqual(programs.with_precompiled(self.rule, unchanged), unchanged)


@unittest.skipIf(tomllib is None or shutil.which("g++") is None, "needs tomllib and g++")
class Loading(unittest.TestCase):
    """Builds the headers as passk does (the table's `start` and `builds`), then a
    program the way `compile` builds it, asking g++ which headers it read."""

    def test_every_header_is_loaded_precompiled_by_the_build_command(self):
        rule = cpp_program_rule()
        prebuilt = rule["prebuilt"]
        with tempfile.TemporaryDirectory() as directory:
            for header in prebuilt["headers"]:
                with open(os.path.join(directory, header["name"]), "w") as written:
                    written.write("".join(line + "\n" for line in header["lines"]))
            for build in prebuilt["builds"]:
                words = [word.replace("{prebuilt}", directory) for word in prebuilt["start"] + build]
                subprocess.run(words, check=True, capture_output=True)
            for header in prebuilt["headers"]:
                source = "".join(line + "\n" for line in header["lines"])
                source += "int main() { std::vector<int> v{1, 2}; return v.size() == 2 ? 0 : 1; }\n"
                # The build's own directory, as a sample's is: not the headers'.
                work = tempfile.mkdtemp(dir=directory)
                with open(os.path.join(work, "main.cpp"), "w") as written:
                    written.write(programs.with_precompiled({"precompiled": prebuilt["headers"]}, source))
                compile_words = [word.replace("{prebuilt}", directory) for word in rule["compile"]]
                built = subprocess.run(compile_words + ["-H", "-Winvalid-pch"], cwd=work, capture_output=True,
                                       text=True)
                self.assertEqual(built.returncode, 0, built.stderr)
                # -H marks a precompiled header it loaded with `!`, one it read as text with `.`.
                self.assertIn(f"! {directory}/{header['name']}.gch", built.stderr, built.stderr[:2000])
                self.assertEqual(subprocess.run([os.path.join(work, "main")]).returncode, 0)


if __name__ == "__main__":
    unittest.main()
