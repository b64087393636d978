"""How EvalPlus (HumanEval+ and MBPP+) decides that an answer is right, for the judge.

An answer is compared with the canonical solution's output for the same input, numpy
values as EvalPlus compares them (numpy.float64 is a float; an array compared with `==`
decides only if it has one element): exact equality first; then, for a float or a list or tuple of floats, closeness within the
problem's `atol` (1e-6 when it gives none), with numpy's default relative tolerance;
and for a few problems, an oracle of their own, because plain equality would fail
right answers (any root of the polynomial is right for `find_zero`).

It also rebuilds the arguments that MBPP+'s file stores as JSON lists or strings but
its functions take as tuples, sets or complex numbers.

Where passk deliberately differs from EvalPlus (see the README), it says so below.
"""

import math
import sys

RELATIVE_TOLERANCE = 1e-07
FLOAT_TOLERANCE = 1e-6

# MBPP+ problems whose outputs are compared as sets.
SET_EQUAL = frozenset((
    "similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly", "larg_nnum",
    "intersection_array", "find_dissimilar", "Diff",
))
# MBPP+ problems that return a match object or None: only "found or not" is compared.
FOUND_OR_NOT = frozenset(("check_str", "text_match_three", "text_starta_endb"))


def poly_at(coefficients, x):
    return sum(coefficient * math.pow(x, power) for power, coefficient in enumerate(coefficients))


def pyramid_surface(base_edge, height):
    """Mbpp/581's other reading: the height is the apex's distance from the base."""
    slant = math.sqrt((base_edge / 2) ** 2 + height ** 2)
    return round(base_edge ** 2 + 2 * base_edge * slant)


def digit_distance(first, second):
    """Mbpp/558's other reading: the shorter number is padded with leading zeros."""
    a, b = str(first), str(second)
    width = max(len(a), len(b))
    return sum(abs(int(x) - int(y)) for x, y in zip(a.zfill(width), b.zfill(width)))


def oracle(dataset, entry_point):
    """The name of the problem's own way of judging an answer, or None for the plain one."""
    if dataset == "humaneval":
        return "find_zero" if entry_point == "find_zero" else None
    if dataset != "mbpp":
        return None
    if entry_point in SET_EQUAL:
        return "set_equal"
    if entry_point in FOUND_OR_NOT:
        return "found_or_not"
    return {
        "are_equivalent": "any_answer",
        "sum_div": "or_zero",
        "surface_Area": "pyramid_surface",
        "digit_distance_nums": "digit_distance",
    }.get(entry_point)


def views(oracle_name):
    """What the candidate's process sends instead of its answer, and what the canonical
    solution's records (None: the answer itself)."""
    if oracle_name == "found_or_not":
        return "bool-or-not-none", "not-none"
    return None, None


def _numpy():
    """numpy, if a numpy value reached the judge (wire.decode imports it then), else None:
    the judge never imports it for plain data."""
    return sys.modules.get("numpy")


def is_floats(value):
    """EvalPlus's test for a float answer: a float (numpy.float64 is one), a non-empty
    list or tuple of them, or a numpy array of float64 or float32."""
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(item, float) for item in value)
    numpy = _numpy()
    if numpy is not None and isinstance(value, numpy.ndarray):
        return value.dtype in (numpy.float64, numpy.float32)
    return False


class Comparison:
    """Compares one phase's answers in order. The tolerance is state: once an expected
    output is a float and the problem gave none, 1e-6 holds for every later input of
    the phase, as in EvalPlus."""

    def __init__(self, dataset, entry_point, atol):
        self.oracle = oracle(dataset, entry_point)
        self.atol = atol
        # Whether `matches` reads the call's arguments: only these oracles do.
        self.reads_arguments = self.oracle in ("pyramid_surface", "digit_distance", "find_zero")

    def matches(self, arguments, got, expected):
        try:
            return self._matches(arguments, got, expected)
        except Exception:
            return False

    def judged_unseen(self, expected_is_floats):
        """An answer judged without comparing values (see expected.py): the tolerance is
        set as `matches` would have set it."""
        if self.oracle != "find_zero" and self.atol == 0 and expected_is_floats:
            self.atol = FLOAT_TOLERANCE

    def _matches(self, arguments, got, expected):
        exact = got == expected
        kind = self.oracle
        if kind == "any_answer":
            exact = True
        elif kind == "or_zero":
            exact = exact or got == 0
        elif kind == "pyramid_surface":
            exact = exact or abs(got - pyramid_surface(*arguments)) <= self.atol
        elif kind == "digit_distance":
            exact = exact or got == digit_distance(*arguments)
        elif kind == "set_equal":
            exact = set(got) == set(expected)
        elif kind == "find_zero":
            return abs(poly_at(*arguments, got)) <= self.atol
        if self.atol == 0 and is_floats(expected):
            self.atol = FLOAT_TOLERANCE
        if exact or self.atol == 0:
            return bool(exact)
        if type(got) is not type(expected):
            return False
        if type(expected) in (list, tuple) and len(got) != len(expected):
            return False
        return all_close(got, expected, RELATIVE_TOLERANCE, self.atol)


def _grid(value):
    """The shape and the numbers of a number or a rectangular nest of lists, tuples and
    numpy arrays. (numpy would also broadcast unequal shapes; passk requires equal ones.)"""
    if type(value) in (int, float, bool, complex):
        return (), [value]
    numpy = _numpy()
    if numpy is not None and isinstance(value, (numpy.number, numpy.bool_)):
        return (), [value.item()]
    if numpy is not None and isinstance(value, numpy.ndarray):
        return _grid(value.tolist())
    if type(value) not in (list, tuple):
        raise TypeError(f"not a number: {type(value).__name__}")
    shapes, numbers = set(), []
    for item in value:
        shape, items = _grid(item)
        shapes.add(shape)
        numbers.extend(items)
    if len(shapes) > 1:
        raise ValueError("ragged")
    return (len(value),) + (shapes.pop() if shapes else ()), numbers


def all_close(got, expected, rtol, atol):
    """numpy.allclose: every |got - expected| <= atol + rtol * |expected|; infinities of
    the same sign are equal, NaN equals nothing."""
    got_shape, got_numbers = _grid(got)
    expected_shape, expected_numbers = _grid(expected)
    if got_shape != expected_shape:
        return False
    for x, y in zip(got_numbers, expected_numbers):
        if x == y:
            continue
        if not abs(x - y) <= atol + rtol * abs(y):
            return False
    return True


# MBPP+ stores some arguments as JSON lists or strings; its functions take them as
# tuples, sets or complex numbers. Each rule rebuilds one input (its list of arguments).
def _each_argument(rebuild):
    return lambda arguments: [rebuild(argument) for argument in arguments]


def _first_argument(rebuild):
    return lambda arguments: [rebuild(arguments[0])] + list(arguments[1:])


def _tuples_inside(argument):
    return [tuple(item) for item in argument]


def _deep_tuple(value):
    return tuple(_deep_tuple(item) for item in value) if isinstance(value, list) else value


def _sets_or_empty_dicts(argument):
    return [set(item) if isinstance(item, list) and len(item) else {} for item in argument]


_RULES = {}
for _task in (2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616, 630, 726, 740,
              744, 809):
    _RULES[_task] = _each_argument(tuple)
for _task in (63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780):
    _RULES[_task] = _each_argument(_tuples_inside)
for _task in (75, 413, 444, 753):
    _RULES[_task] = _first_argument(_tuples_inside)
for _task in (106, 750):
    _RULES[_task] = lambda arguments: [arguments[0], tuple(arguments[1])]
for _task in (250, 405, 446, 617, 720, 763, 808, 307):
    _RULES[_task] = _first_argument(tuple)
for _task in (259, 401, 445):
    _RULES[_task] = _each_argument(lambda argument: tuple(_tuples_inside(argument)))
for _task in (580, 615, 791):
    _RULES[_task] = _deep_tuple
_RULES[115] = lambda arguments: [_sets_or_empty_dicts(arguments[0])]
_RULES[124] = lambda arguments: (float(arguments[0]), complex(arguments[1]))
_RULES[252] = lambda arguments: [complex(arguments[0])]
_RULES[278] = lambda arguments: [tuple(tuple(item) if isinstance(item, list) else item for item in arguments[0])]
_RULES[722] = lambda arguments: [{key: tuple(value) for key, value in arguments[0].items()}] + list(arguments[1:])


def rebuild_inputs(dataset, task_number, inputs):
    """MBPP+'s inputs as its functions take them."""
    rule = _RULES.get(task_number) if dataset == "mbpp" else None
    return inputs if rule is None else [rule(arguments) for arguments in inputs]
