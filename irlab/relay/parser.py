"""The Relay text parser: reads what ``irlab.relay.printer`` writes (TVM's text format).

A hand-written tokenizer and a recursive-descent parser (TVM's ``src/relay/parser``). Recursion
only follows the nesting of the text (``fn`` in ``fn``, parentheses); the long parts are loops:
a sequence of ``%N = ...;`` bindings or a chain of ``let``s parses at constant stack depth.

- ``parse(text)`` returns an ``IRModule`` (``def @name(...) {...}`` definitions; a bare
  expression becomes ``@main`` through ``IRModule.from_expr``).
- ``parse_expr(text)`` returns one expression (``free_var`` lines allowed).

Both accept the ``#[version = "0.0.5"]`` header and the ``#[metadata]`` section written by
``astext()`` (see ``irlab.relay.printer`` for its format). Comments, including the printer's
``/* ty=... */``, are ignored; parsed nodes carry no span. ``%N`` graph bindings are global to
the text (as in TVM), so a ``%N`` used twice is one shared object.

Every error is an ``irlab.errors.ParseError`` whose message reads
``source:line:column: message``, then the offending line and a caret under the column.
"""

from __future__ import annotations

import bisect
import difflib
import os
import re

import numpy as np

from irlab.errors import IrlabError, ParseError
from irlab.ir.attrs import DictAttrs, get_attrs_type
from irlab.runtime.dtype import normalize_dtype
from irlab.ir.expr import GlobalVar
from irlab.ir.module import IRModule
from irlab.ir.op import Op
from irlab.ir.adt import Constructor, TypeData
from irlab.ir.type import (FuncType, GlobalTypeVar, IncompleteType, RelayRefType, TensorType,
                           TupleType, TypeCall, TypeVar)
from irlab.relay.adt import (Clause, Match, PatternConstructor, PatternTuple, PatternVar,
                             PatternWildcard)
from irlab.relay.expr import (Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple,
                              TupleGetItem, Var)
from irlab.relay.function import Function
from irlab.relay.printer import read_metadata
from irlab.runtime.registry import register_func
from irlab.tir.expr import Any

_NAME = r"[A-Za-z_/][A-Za-z0-9_/]*(?:\.[A-Za-z_/][A-Za-z0-9_/]*)*"
_TOKEN = re.compile(r"""
  (?P<ws>[ \t\r\n]+)
| (?P<lcomment>//[^\n]*)
| (?P<bcomment>/\*)
| (?P<version>\#\[\s*version\s*=\s*"[^"\n]*"\s*\])
| (?P<metadata>\#\[\s*metadata\s*\])
| (?P<meta>meta\[[A-Za-z0-9_.]+\]\[\d+\])
| (?P<special>-?(?:inf|nan)f(?:16|32|64)?)(?![A-Za-z0-9_])
| (?P<num>-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?(?:[fi]\d*)?)
| (?P<graph>%\d+)
| (?P<local>%""" + _NAME + r""")
| (?P<global>@""" + _NAME + r""")
| (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
| (?P<str>"(?:[^"\\\n]|\\.)*")
| (?P<arrow>->|=>)
| (?P<binop>==|!=|<=|>=|[-+*/<>])
| (?P<punct>[()\[\]{},;:=.?])
""", re.X)
_NUMBER = re.compile(r"(-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)(?:([fi])(\d*))?")
_META = re.compile(r"meta\[([A-Za-z0-9_.]+)\]\[(\d+)\]")
_VERSION = re.compile(r'#\[\s*version\s*=\s*"([^"\n]*)"\s*\]')
_KEYWORDS = {"fn", "def", "let", "if", "else", "free_var"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"'}
# Infix operators (TVM's text format): the Relay op each stands for and its precedence (higher
# binds tighter); all are left-associative.
_BINARY_OPS = {"*": ("multiply", 4), "/": ("divide", 4), "+": ("add", 3), "-": ("subtract", 3),
               "<": ("less", 2), ">": ("greater", 2), "<=": ("less_equal", 2),
               ">=": ("greater_equal", 2), "==": ("equal", 1), "!=": ("not_equal", 1)}
# Token kinds that end an operand: a ``-`` right after one is subtraction, not a sign.
_OPERAND_ENDS = {"local", "graph", "global", "int", "float", "bool", "meta"}
# Scalar type names TVM's parser reads with the default width.
_DTYPE_ALIASES = {"int": "int32", "uint": "uint32", "float": "float32"}
_INT_RANGES = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}


class Token:
    """A token: ``kind`` (``int float bool str local graph global ident meta kw punct
    version metadata eof``), its ``value`` and its character range in the source."""

    __slots__ = ("kind", "value", "start", "end")

    def __init__(self, kind, value, start, end):
        self.kind, self.value, self.start, self.end = kind, value, start, end

    def __repr__(self):
        return f"Token({self.kind}, {self.value!r}, {self.start})"


class _Source:
    """The text, its name and line starts, for ``line:column`` messages with a caret."""

    def __init__(self, text, name):
        self.text = text
        self.name = name
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def error(self, offset, message) -> ParseError:
        offset = max(0, min(offset, len(self.text)))
        index = bisect.bisect_right(self.line_starts, offset) - 1
        start = self.line_starts[index]
        column = offset - start + 1
        end = self.text.find("\n", start)
        line = self.text[start:] if end < 0 else self.text[start:end]
        line = line.rstrip("\r")
        pad = "".join(c if c == "\t" else " " for c in line[:column - 1])
        text = f"{self.name}:{index + 1}:{column}: {message}\n  {line}\n  {pad}^"
        return ParseError(text, index + 1, column)


# ---------------------------------------------------------------------------------------------
# tokenizer
def _number(text, source, start):
    match = _NUMBER.fullmatch(text)
    literal, kind, width = match.group(1), match.group(2), match.group(3)
    is_real = "." in literal or "e" in literal or "E" in literal
    if kind == "f" or (kind is None and is_real):
        dtype = "float" + (width or "32")
        if dtype not in ("float16", "float32", "float64"):
            raise source.error(start, f"invalid numeric suffix in '{text}'")
        value = float(literal)
        with np.errstate(over="ignore"):
            rounded = np.array(value, dtype=dtype)
        # beyond the largest finite value (1e39f32 would silently be inf, 65505f16 65504);
        # the printer's shortest spelling of that value (3.4028235e38f32) is the value itself
        largest = np.finfo(dtype).max
        if np.isinf(rounded) or (abs(value) > float(largest) and abs(value) != float(
                np.format_float_scientific(largest, unique=True))):
            raise source.error(start, f"{literal} is out of the range of {dtype} (largest "
                                      f"finite value {largest:g}); write inff{dtype[5:]} "
                                      f"for infinity")
        return Token("float", (value, dtype), start, start + len(text))
    if kind == "i":
        dtype = "int" + (width or "32")
        if dtype not in _INT_RANGES:
            raise source.error(start, f"invalid numeric suffix in '{text}'")
        if is_real:
            raise source.error(start, f"'{text}': an integer suffix on a number with a "
                                      f"fraction or exponent (write {literal}f{width or '32'} "
                                      f"for a float)")
    else:
        dtype = "int32"
    value = int(literal)
    bits = _INT_RANGES[dtype]
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        if kind is None and -(1 << 63) <= value < (1 << 63):
            dtype = "int64"  # an unsuffixed literal too big for int32 (as TVM)
        else:
            raise source.error(start, f"integer {value} does not fit in {dtype}")
    return Token("int", (value, dtype), start, start + len(text))


def _skip_block_comment(text, pos, source):
    """The end of a (nestable) ``/* ... */`` comment starting at ``pos``."""
    depth = 0
    i = pos
    while True:
        opening = text.find("/*", i)
        closing = text.find("*/", i)
        if closing < 0:
            raise source.error(pos, "unterminated comment")
        if 0 <= opening < closing:
            depth += 1
            i = opening + 2
        else:
            depth -= 1
            i = closing + 2
            if depth == 0:
                return i


def _unquote(body, source, start):
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        code = body[i + 1]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i + 2:i + 4]):
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        else:
            raise source.error(start + 1 + i, f"unknown escape sequence '\\{code}'")
    return "".join(out)


def tokenize(source: _Source):
    """The tokens of the text (comments and whitespace dropped), then the ``#[metadata]``
    token if there is one (it runs to the end of the text)."""
    text = source.text
    tokens = []
    metadata = None
    pos = 0
    n = len(text)
    match_at = _TOKEN.match
    while pos < n:
        m = match_at(text, pos)
        if m is None:
            raise source.error(pos, f"unexpected character {text[pos]!r}")
        kind = m.lastgroup
        end = m.end()
        if kind == "ws" or kind == "lcomment":
            pass
        elif kind == "bcomment":
            end = _skip_block_comment(text, pos, source)
        elif kind in ("num", "special") and m.group()[0] == "-" and tokens and (
                tokens[-1].kind in _OPERAND_ENDS or tokens[-1].value == ")"):
            tokens.append(Token("binop", "-", pos, pos + 1))  # `%n -1` is `%n - 1`
            end = pos + 1
        elif kind == "binop":
            tokens.append(Token("binop", m.group(), pos, end))
        elif kind == "punct" or kind == "arrow":
            tokens.append(Token("punct", m.group(), pos, end))
        elif kind == "local":
            tokens.append(Token("local", text[pos + 1:end], pos, end))
        elif kind == "graph":
            tokens.append(Token("graph", int(text[pos + 1:end]), pos, end))
        elif kind == "ident":
            word = m.group()
            if word in _KEYWORDS:
                tokens.append(Token("kw", word, pos, end))
            elif word == "True" or word == "False":
                tokens.append(Token("bool", word == "True", pos, end))
            else:
                tokens.append(Token("ident", word, pos, end))
        elif kind == "num":
            if end < n and (text[end].isalnum() or text[end] == "_"):
                raise source.error(pos, f"invalid number '{m.group()}{text[end]}'")
            tokens.append(_number(m.group(), source, pos))
        elif kind == "global":
            tokens.append(Token("global", text[pos + 1:end], pos, end))
        elif kind == "special":
            word = m.group()
            sign = -1.0 if word[0] == "-" else 1.0
            value = sign * float(word.lstrip("-")[:3])
            width = word.lstrip("-")[4:] or "32"
            tokens.append(Token("float", (value, "float" + width), pos, end))
        elif kind == "str":
            tokens.append(Token("str", _unquote(m.group()[1:-1], source, pos), pos, end))
        elif kind == "meta":
            key, index = _META.fullmatch(m.group()).groups()
            tokens.append(Token("meta", (key, int(index)), pos, end))
        elif kind == "version":
            version = _VERSION.fullmatch(m.group()).group(1)
            tokens.append(Token("version", version, pos, end))
        elif kind == "metadata":
            metadata = Token("metadata", text[end:], pos, end)
            break
        pos = end
    eof = len(text.rstrip())
    tokens.append(Token("eof", None, eof, eof))
    return tokens, metadata


def _as_constant(value):
    """A meta-table entry: arrays become Constants; other values (a ``VirtualDevice`` for an
    attribute) stay as they are."""
    if isinstance(value, Constant) or not isinstance(value, (np.ndarray, np.generic, list,
                                                             tuple, int, float)):
        return value
    return Constant(np.asarray(value))


# ---------------------------------------------------------------------------------------------
# parser
_EXPR_START = {"int", "float", "bool", "local", "graph", "global", "ident", "meta"}


class _Parser:
    def __init__(self, source, tokens, meta_table, module):
        self.source = source
        self.tokens = tokens
        self.pos = 0
        self.meta_table = meta_table
        self.module = module
        # Lexical scopes as one name -> [vars] map (innermost last) plus, per open scope, the
        # names it bound: O(1) lookups even under 10,000 nested lets.
        self.bound: dict = {}
        self.scopes: list = [[]]
        self.free_vars: dict = {}
        self.graph: dict = {}
        self.globals: dict = {}
        self.type_globals: dict = {}  # ADT name -> GlobalTypeVar
        self.constructors: dict = {}  # constructor name -> Constructor
        self.type_params: dict = {}  # type variable name -> [TypeVar] (innermost last)
        if module is not None:
            for gv in module.get_global_vars():
                self.globals[gv.name_hint] = gv
            for gtv, data in module.type_definitions.items():
                self.type_globals[gtv.name_hint] = gtv
                self.constructors.update((c.name_hint, c) for c in data.constructors)
        # TVM's printer can print a use of `%N` (or of a free variable) before its definition:
        # a node first printed inside an `if` branch or `fn` body, when that block is printed
        # before a sibling binding that also uses the node. Such forward references are read
        # ahead: every `%N = ` is located first, free_var declarations are read up front.
        self.graph_defs: dict = {}  # N -> token indexes of the right-hand sides of `%N = `
        self.read_ahead: dict = {}  # right-hand side index -> (value, index after its ';')
        self.free_decls: dict = {}  # token index of `free_var` -> Var
        self.first_free: dict = {}  # name -> the first declared Var of that name
        self.reading_ahead = 0
        for i, token in enumerate(tokens[:-1]):
            after = tokens[i + 1]
            if token.kind == "graph" and after.kind == "punct" and after.value == "=":
                self.graph_defs.setdefault(token.value, []).append(i + 2)

    # -- token helpers --------------------------------------------------------------------
    def peek(self, ahead=0):
        index = self.pos + ahead
        return self.tokens[index] if index < len(self.tokens) else self.tokens[-1]

    def advance(self):
        token = self.tokens[self.pos]
        if token.kind != "eof":
            self.pos += 1
        return token

    def at(self, kind, value=None, ahead=0) -> bool:
        token = self.peek(ahead)
        return token.kind == kind and (value is None or token.value == value)

    def accept(self, kind, value=None):
        if self.at(kind, value):
            return self.advance()
        return None

    def token_text(self, token) -> str:
        return self.source.text[token.start:token.end]

    def text_of(self, token) -> str:
        """How an error message names a token."""
        if token.kind == "eof":
            return "end of input"
        if token.kind in ("punct", "kw"):
            return f"'{token.value}'"
        text = self.token_text(token)
        return repr(text if len(text) <= 40 else text[:37] + "...").replace('"', "'")

    def error(self, token, message) -> ParseError:
        return self.source.error(token.start, message)

    def expect(self, kind, value=None, what=None):
        token = self.peek()
        if token.kind == kind and (value is None or token.value == value):
            return self.advance()
        wanted = what or (f"'{value}'" if value is not None else kind)
        raise self.error(token, f"expected {wanted} but got {self.text_of(token)}")

    # -- scopes ---------------------------------------------------------------------------
    def lookup(self, token):
        name = token.value
        shadowed = self.bound.get(name)
        if shadowed:
            return shadowed[-1]
        var = self.free_vars.get(name)
        if var is None:
            var = self.first_free.get(name)
        if var is None:
            raise self.error(token, f"undefined variable '%{name}'")
        return var

    def forward_binding(self, token):
        """Read the right-hand side of a ``%N = `` not reached yet: the next one after this
        use or, inside a read-ahead, the closest before (no ``%N`` was bound so far)."""
        defs = self.graph_defs.get(token.value, ())
        later = [i for i in defs if i > self.pos]
        if later:
            where = later[0]
        elif defs and not self.reading_ahead:
            raise self.error(token, f"'%{token.value}' is used before it is defined")
        elif defs:
            where = defs[-1]
        else:
            raise self.error(token, f"'%{token.value}' is not defined")
        saved = self.pos
        self.pos = where
        self.reading_ahead += 1
        try:
            value = self.parse_expr()
            self.expect("punct", ";")
        finally:
            self.reading_ahead -= 1
        self.read_ahead[where] = (value, self.pos)
        self.pos = saved
        self.graph[token.value] = value
        return value

    def push_scope(self):
        self.scopes.append([])

    def pop_scope(self):
        for name in self.scopes.pop():
            self.bound[name].pop()

    def bind(self, name, var):
        self.bound.setdefault(name, []).append(var)
        self.scopes[-1].append(name)

    def global_var(self, name) -> GlobalVar:
        gv = self.globals.get(name)
        if gv is None:
            gv = self.globals[name] = GlobalVar(name)
        return gv

    # -- programs -------------------------------------------------------------------------
    def read_free_var_declarations(self):
        for i, token in enumerate(self.tokens):
            if token.kind == "kw" and token.value == "free_var":
                self.pos = i + 1
                name = self.expect("local", what="a variable like '%x'").value
                var = Var(name, self.parse_type() if self.accept("punct", ":") else None)
                self.free_decls[i] = var
                self.first_free.setdefault(name, var)
        self.pos = 0

    def parse_program(self, want_module):
        self.read_free_var_declarations()
        self.accept("version")
        if want_module and (self.at("kw", "def") or self.at("eof") or self.at_type_definition()):
            result = self.parse_definitions()
        else:
            result = self.parse_seq()
            if want_module:
                result = IRModule.from_expr(result)
        self.expect("eof", what="end of input")
        return result

    def at_type_definition(self) -> bool:
        return (self.at("ident", "type") and self.at("ident", None, 1)) or (
            self.at("ident", "extern") and self.at("ident", "type", 1))

    def parse_definitions(self) -> IRModule:
        mod = self.module.copy() if self.module is not None else IRModule()
        defined = set()
        while True:
            if self.at_type_definition():
                data = self.parse_type_definition()
                mod[data.header] = data
                continue
            if not self.accept("kw", "def"):
                break
            token = self.expect("global", what="a global name like '@main'")
            if token.value in defined:
                raise self.error(token, f"@{token.value} is defined twice")
            defined.add(token.value)
            gv = self.global_var(token.value)
            mod.add(gv, self.parse_function(), update=True)
        return mod

    def parse_type_definition(self) -> TypeData:
        """``type Name[A, ...] { Ctor(T, ...), ... }`` or ``extern type Name[A, ...]``."""
        extern = self.accept("ident", "extern") is not None
        self.expect("ident", "type")
        token = self.expect("ident", what="a type name")
        if token.value in self.type_globals:
            raise self.error(token, f"type {token.value} is defined twice")
        header = self.type_globals[token.value] = GlobalTypeVar(token.value)
        type_vars = self.parse_type_params()
        constructors = []
        if not extern:
            self.expect("punct", "{")
            while not self.accept("punct", "}"):
                name = self.expect("ident", what="a constructor name")
                if name.value in self.constructors or name.value in self.type_globals:
                    raise self.error(name, f"constructor {name.value} is defined twice")
                inputs = self.parse_type_list() if self.at("punct", "(") else []
                ctor = Constructor(name.value, inputs, header)
                self.constructors[name.value] = ctor
                constructors.append(ctor)
                if not self.accept("punct", ","):
                    self.expect("punct", "}")
                    break
        self.pop_type_params(type_vars)
        return TypeData(header, type_vars, constructors)

    def parse_type_params(self) -> list:
        """``[A, B]`` (optional): new type variables, in scope until ``pop_type_params``."""
        type_vars = []
        if self.accept("punct", "["):
            while not self.accept("punct", "]"):
                name = self.expect("ident", what="a type parameter")
                type_vars.append(TypeVar(name.value))
                if not self.accept("punct", ","):
                    self.expect("punct", "]")
                    break
        for tv in type_vars:
            self.type_params.setdefault(tv.name_hint, []).append(tv)
        return type_vars

    def pop_type_params(self, type_vars):
        for tv in type_vars:
            self.type_params[tv.name_hint].pop()

    def parse_function(self) -> Function:
        """``[A, ...](%x: T, ..., key=value, ...) -> R { body }`` after ``fn`` or
        ``def @name``."""
        type_vars = self.parse_type_params()
        try:
            return self.parse_function_rest(type_vars)
        finally:
            self.pop_type_params(type_vars)

    def parse_function_rest(self, type_vars) -> Function:
        self.push_scope()
        self.expect("punct", "(")
        params, attrs = [], None
        if not self.accept("punct", ")"):
            while True:
                if self.at("ident") and self.at("punct", "=", 1):
                    attrs = DictAttrs({k: v for k, v, _ in self.parse_attrs()})
                    self.expect("punct", ")")
                    break
                token = self.expect("local", what="a parameter like '%x'")
                ty = self.parse_var_type()
                var = Var(token.value, ty)
                self.bind(token.value, var)
                params.append(var)
                if self.accept("punct", ","):
                    if self.accept("punct", ")"):
                        break
                    continue
                self.expect("punct", ")")
                break
        ret_type = self.parse_type() if self.accept("punct", "->") else None
        body = self.parse_block()
        self.pop_scope()
        return Function(params, body, ret_type, type_vars, attrs=attrs)

    def parse_block(self):
        self.expect("punct", "{")
        self.push_scope()
        body = self.parse_seq()
        self.pop_scope()
        self.expect("punct", "}")
        return body

    def parse_seq(self):
        """Bindings then one expression: ``free_var``s, ``%N = e;``, ``let %x = e;`` and
        ``e;`` (a let of ``%_``), in a loop (constant stack depth), then the body; lets are
        assembled from the inside out."""
        lets = []
        while True:
            token = self.peek()
            if token.kind == "kw" and token.value == "free_var":
                var = self.free_decls[self.pos]
                self.advance()
                self.expect("local")
                if self.accept("punct", ":"):
                    self.parse_type()
                self.free_vars[var.name_hint] = var
                self.expect("punct", ";")
            elif token.kind == "graph" and self.at("punct", "=", 1):
                done = self.read_ahead.pop(self.pos + 2, None)
                if done is not None:  # already read for a forward reference
                    self.graph[token.value], self.pos = done
                    continue
                self.advance()
                self.advance()
                value = self.parse_expr()
                self.expect("punct", ";")
                self.graph[token.value] = value
            elif token.kind == "kw" and token.value == "let":
                self.advance()
                name = self.expect("local", what="a variable like '%x'").value
                var = Var(name, self.parse_var_type())
                # Bound before its value is read, as in TVM (a let-bound function may recurse).
                self.push_scope()
                self.bind(name, var)
                self.expect("punct", "=")
                value = self.parse_expr()
                self.expect("punct", ";")
                lets.append((var, value))
            else:
                body = self.parse_expr()
                if not self.accept("punct", ";"):
                    break
                # ``e; rest`` evaluates e for its effect: ``let %_ = e; rest`` (as TVM's parser)
                self.push_scope()
                lets.append((Var("_"), body))
        for var, value in reversed(lets):
            self.pop_scope()
            body = Let(var, value, body)
        return body

    # -- expressions ----------------------------------------------------------------------
    def parse_expr(self, min_precedence=1):
        """Postfix expressions joined by infix operators (``%a + %b * 2`` is
        ``add(%a, multiply(%b, 2))``), by precedence climbing."""
        lhs = self.parse_postfix()
        while self.at("binop") and _BINARY_OPS[self.peek().value][1] >= min_precedence:
            token = self.advance()
            op_name, precedence = _BINARY_OPS[token.value]
            rhs = self.parse_expr(precedence + 1)
            lhs = Call(Op.get(op_name), [lhs, rhs])
        return lhs

    def parse_postfix(self):
        """An atom followed by call argument lists and ``.index`` projections; a leading
        ``-`` negates it (a literal folds: ``--10`` is the constant 10)."""
        if self.accept("binop", "-"):
            operand = self.parse_postfix()
            if isinstance(operand, Constant):
                return Constant(-operand.data.numpy())
            return Call(Op.get("negative"), [operand])
        expr = self.parse_atom()
        while True:
            if self.at("punct", "("):
                expr = self.parse_call(expr)
            elif self.at("punct", ".") and self.at("int", None, 1):
                self.advance()
                expr = TupleGetItem(expr, self.advance().value[0])
            elif self.at("punct", ".") and self.at("float", None, 1) and \
                    re.fullmatch(r"\d+\.\d+", self.token_text(self.peek(1))):
                self.advance()  # `%t.0.1` lexes as `%t`, `.`, `0.1`: two projections
                first, second = self.token_text(self.advance()).split(".")
                expr = TupleGetItem(TupleGetItem(expr, int(first)), int(second))
            else:
                return expr

    def can_start_expr(self, token) -> bool:
        return token.kind in _EXPR_START or (token.kind == "punct" and token.value == "(") or (
            token.kind == "kw" and token.value in ("fn", "if", "let", "free_var"))

    def parse_atom(self):
        token = self.peek()
        kind = token.kind
        if kind == "graph":
            self.advance()
            value = self.graph.get(token.value)
            return value if value is not None else self.forward_binding(token)
        if kind == "local":
            self.advance()
            return self.lookup(token)
        if kind == "int" or kind == "float":
            self.advance()
            value, dtype = token.value
            return Constant(np.array(value, dtype=dtype))
        if kind == "bool":
            self.advance()
            return Constant(np.array(token.value, dtype="bool"))
        if kind == "global":
            self.advance()
            return self.global_var(token.value)
        if kind == "ident":
            special = self.parse_special_form(token)
            if special is not None:
                return special
            self.advance()
            try:
                return Op.get(token.value)
            except IrlabError:
                raise self.error(token, _unknown_op(token.value)) from None
        if kind == "meta":
            self.advance()
            return self.meta_ref(token)
        if kind == "kw" and token.value == "fn":
            self.advance()
            return self.parse_function()
        if kind == "kw" and token.value == "if":
            return self.parse_if()
        if kind == "punct" and token.value == "(":
            return self.parse_parens()
        raise self.error(token, f"expected an expression but got {self.text_of(token)}")

    def parse_special_form(self, token):
        """Constructors, ``ref``/``ref_read``/``ref_write`` and ``match``, else None."""
        name = token.value
        ctor = self.constructors.get(name)
        if ctor is not None:
            self.advance()
            if ctor.inputs:
                return ctor
            if self.at("punct", "(") and self.at("punct", ")", 1):
                self.advance()
                self.advance()
            return Call(ctor, [])  # ``Nil`` is the value the constructor builds
        refs = {"ref": RefCreate, "ref_read": RefRead, "ref_write": RefWrite}
        if name in refs and self.at("punct", "(", 1):
            self.advance()
            open_token = self.advance()
            args = [self.parse_seq()]
            while self.accept("punct", ","):
                args.append(self.parse_seq())
            self.expect("punct", ")")
            wanted = 2 if name == "ref_write" else 1
            if len(args) != wanted:
                raise self.error(open_token, f"{name} takes {wanted} argument(s), got "
                                             f"{len(args)}")
            return refs[name](*args)
        if name == "match" and (self.at("punct", "(", 1) or self.at("punct", "?", 1)):
            return self.parse_match()
        return None

    def parse_match(self):
        """``match (e) { pattern => rhs, ... }``; ``match?`` allows unmatched values."""
        self.expect("ident", "match")
        complete = self.accept("punct", "?") is None
        self.expect("punct", "(")
        data = self.parse_seq()
        self.expect("punct", ")")
        self.expect("punct", "{")
        clauses = []
        while not self.accept("punct", "}"):
            self.push_scope()
            lhs = self.parse_pattern()
            self.expect("punct", "=>")
            rhs = self.parse_block() if self.at("punct", "{") else self.parse_expr()
            self.pop_scope()
            clauses.append(Clause(lhs, rhs))
            if not self.accept("punct", ","):
                self.expect("punct", "}")
                break
        return Match(data, clauses, complete)

    def parse_pattern(self):
        token = self.peek()
        if token.kind == "ident" and token.value == "_":
            self.advance()
            return PatternWildcard()
        if token.kind == "local":
            self.advance()
            var = Var(token.value, self.parse_var_type())
            self.bind(token.value, var)
            return PatternVar(var)
        if token.kind == "punct" and token.value == "(":
            return PatternTuple(self.parse_pattern_list())
        if token.kind == "ident" and token.value in self.constructors:
            self.advance()
            ctor = self.constructors[token.value]
            patterns = self.parse_pattern_list() if self.at("punct", "(") else []
            return PatternConstructor(ctor, patterns)
        raise self.error(token, f"expected a pattern but got {self.text_of(token)}")

    def parse_pattern_list(self) -> list:
        self.expect("punct", "(")
        patterns = []
        while not self.accept("punct", ")"):
            patterns.append(self.parse_pattern())
            if not self.accept("punct", ","):
                self.expect("punct", ")")
                break
        return patterns

    def parse_parens(self):
        """``()``, ``(e)``, ``(e,)`` or ``(e1, e2, ...)``."""
        self.expect("punct", "(")
        if self.accept("punct", ")"):
            return Tuple([])
        first = self.parse_seq()
        if self.accept("punct", ")"):
            return first
        fields = [first]
        self.expect("punct", ",", what="',' or ')'")
        while not self.accept("punct", ")"):
            if not self.can_start_expr(self.peek()):
                raise self.error(self.peek(), f"expected ')' but got {self.text_of(self.peek())}")
            fields.append(self.parse_seq())
            if not self.accept("punct", ","):
                self.expect("punct", ")")
                break
        return Tuple(fields)

    def parse_if(self):
        self.expect("kw", "if")
        self.expect("punct", "(")
        cond = self.parse_seq()
        self.expect("punct", ")")
        true_branch = self.parse_block()
        self.expect("kw", "else")
        false_branch = self.parse_block()
        return If(cond, true_branch, false_branch)

    def parse_call(self, callee):
        open_token = self.expect("punct", "(")
        args, items = [], None
        if not self.accept("punct", ")"):
            while True:
                token = self.peek()
                if token.kind == "ident" and self.at("punct", "=", 1):
                    items = self.parse_attrs()
                    self.expect("punct", ")")
                    break
                if not self.can_start_expr(token):
                    raise self.error(token, f"expected ')' but got {self.text_of(token)}")
                args.append(self.parse_seq())
                if self.accept("punct", ","):
                    if self.accept("punct", ")"):
                        break
                    continue
                self.expect("punct", ")")
                break
        attrs = self.call_attrs(callee, items, open_token)
        return Call(callee, args, attrs)

    def call_attrs(self, callee, items, token):
        if not isinstance(callee, Op):
            if not items:
                return None
            values = {key: value for key, value, _ in items}
            type_key = values.pop("attrs_type_key", None)
            if type_key is None:
                return DictAttrs(values)
            try:
                return get_attrs_type(type_key)(**values)
            except IrlabError as err:
                raise self.error(token, str(err)) from None
        attrs_type = callee.attrs_type
        if attrs_type is None:
            if items:
                raise self.error(items[0][2], f"operator '{callee.name}' takes no attributes")
            return None
        kwargs = {}
        for key, value, key_token in items or ():
            if key not in attrs_type._fields:
                known = ", ".join(attrs_type._fields) or "none"
                raise self.error(key_token, f"operator '{callee.name}' has no attribute "
                                            f"'{key}' (attributes: {known})")
            default = attrs_type._defaults.get(key)
            wanted = _attr_kind_mismatch(default, value)
            if wanted:
                raise self.error(key_token, f"attribute '{key}' of '{callee.name}' expects "
                                            f"{wanted}, got {value!r}")
            kwargs[key] = value
        try:
            return attrs_type(**kwargs)
        except IrlabError as err:
            raise self.error(token, f"bad attributes for '{callee.name}': {err}") from None

    def parse_attrs(self) -> list:
        """``key=value, ...`` as ``[(key, value, key_token)]``."""
        items = []
        while self.at("ident") and self.at("punct", "=", 1):
            key = self.advance()
            self.advance()
            items.append((key.value, self.parse_attr_value(), key))
            if not self.accept("punct", ","):
                break
        return items

    def parse_attr_value(self):
        token = self.peek()
        kind = token.kind
        if kind in ("int", "float"):
            self.advance()
            return token.value[0]
        if kind in ("bool", "str"):
            self.advance()
            return token.value
        if kind == "ident" and token.value in ("None", "nullptr"):
            self.advance()
            return None
        if kind == "meta":
            self.advance()
            return self.meta_ref(token)
        if kind == "punct" and token.value in ("[", "("):
            self.advance()
            closer = "]" if token.value == "[" else ")"
            values = []
            while not self.accept("punct", closer):
                values.append(self.parse_attr_value())
                if not self.accept("punct", ","):
                    self.expect("punct", closer)
                    break
            if closer == ")" and len(values) == 1:
                return values[0]
            return tuple(values)
        raise self.error(token, f"expected an attribute value but got {self.text_of(token)}")

    def meta_ref(self, token):
        key, index = token.value
        entries = self.meta_table.get(key)
        if entries is None:
            hint = "" if self.meta_table else \
                " (the text has no #[metadata] section: print it with astext() to keep it)"
            raise self.error(token, f"no metadata entries for '{key}'{hint}")
        if index >= len(entries):
            raise self.error(token, f"meta[{key}][{index}] is out of range: the metadata "
                                    f"holds {len(entries)} '{key}' entries")
        return entries[index]

    # -- types ----------------------------------------------------------------------------
    def parse_var_type(self):
        """A variable's optional ``: T`` (``: _`` is an ``IncompleteType``)."""
        return self.parse_type() if self.accept("punct", ":") else None

    def parse_type(self):
        token = self.peek()
        if token.kind == "punct" and token.value == "(":
            return TupleType(self.parse_type_list())
        if token.kind == "kw" and token.value == "fn":
            self.advance()
            type_vars = self.parse_type_params()
            args = self.parse_type_list()
            self.expect("punct", "->")
            ret = self.parse_type()
            self.pop_type_params(type_vars)
            return FuncType(args, ret, type_vars)
        if token.kind == "ident":
            self.advance()
            if token.value == "Tensor":
                self.expect("punct", "[")
                shape = self.parse_shape()
                self.expect("punct", ",")
                dtype = self.parse_dtype(self.expect("ident", what="a data type"))
                self.expect("punct", "]")
                return TensorType(shape, dtype)
            if token.value == "_":
                return IncompleteType()
            scoped = self.type_params.get(token.value)
            if scoped:
                return scoped[-1]
            gtv = self.type_globals.get(token.value)
            if gtv is not None:
                args = self.parse_type_args() if self.at("punct", "[") else []
                return TypeCall(gtv, args)
            if token.value == "ref" and self.at("punct", "("):
                self.advance()
                value = self.parse_type()
                self.expect("punct", ")")
                return RelayRefType(value)
            return TensorType((), self.parse_dtype(token))
        raise self.error(token, f"expected a type but got {self.text_of(token)}")

    def parse_type_args(self) -> list:
        self.expect("punct", "[")
        types = []
        while not self.accept("punct", "]"):
            types.append(self.parse_type())
            if not self.accept("punct", ","):
                self.expect("punct", "]")
                break
        return types

    def parse_type_list(self) -> list:
        self.expect("punct", "(")
        types = []
        while not self.accept("punct", ")"):
            types.append(self.parse_type())
            if not self.accept("punct", ","):
                self.expect("punct", ")")
                break
        return types

    def parse_shape(self) -> tuple:
        self.expect("punct", "(")
        dims = []
        while not self.accept("punct", ")"):
            if self.accept("punct", "?"):
                dims.append(Any())
                if not self.accept("punct", ","):
                    self.expect("punct", ")")
                    break
                continue
            token = self.expect("int", what="a dimension")
            if token.value[0] < 0:
                raise self.error(token, "a dimension cannot be negative")
            dims.append(token.value[0])
            if not self.accept("punct", ","):
                self.expect("punct", ")")
                break
        return tuple(dims)

    def parse_dtype(self, token) -> str:
        try:
            return normalize_dtype(_DTYPE_ALIASES.get(token.value, token.value))
        except IrlabError:
            raise self.error(token, f"unknown type '{token.value}'") from None


def _attr_kind_mismatch(default, value):
    """What an attribute expects when ``value`` is not of its default's kind, else None."""
    if default is None or value is None:
        return None
    if isinstance(default, bool):
        return None if isinstance(value, bool) else "True or False"
    if isinstance(value, bool):
        return _KIND_NAMES.get(type(default))
    for kind, name in _KIND_NAMES.items():
        if isinstance(default, kind):
            ok = isinstance(value, (int, float)) if kind is float else isinstance(value, kind)
            return None if ok else name
    return None


_KIND_NAMES = {str: "a string", int: "an integer", float: "a number", tuple: "a list"}


def _unknown_op(name) -> str:
    close = difflib.get_close_matches(name, Op.list_op_names(), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"unknown operator '{name}'{hint}"


def _meta_table(init_meta_table, metadata, source) -> dict:
    table = {}
    for key, entries in (init_meta_table or {}).items():
        table[str(key)] = [_as_constant(e) for e in entries]
    if metadata is not None:
        try:
            table.update(read_metadata(metadata.value))
        except (ValueError, TypeError, KeyError, IrlabError) as err:
            raise source.error(metadata.start, f"invalid metadata section: {err}") from None
    return table


def _run(text, source_name, init_module, init_meta_table, want_module):
    if not isinstance(text, str):
        raise ParseError(f"the text to parse must be a str, got {type(text).__name__}")
    source = _Source(text, str(source_name))
    tokens, metadata = tokenize(source)
    parser = _Parser(source, tokens, _meta_table(init_meta_table, metadata, source), init_module)
    try:
        return parser.parse_program(want_module)
    except RecursionError:
        raise parser.error(parser.peek(), "the program is nested too deeply to parse") from None
    except ParseError:
        raise
    except IrlabError as err:  # a node constructor refused what was written
        raise parser.error(parser.tokens[max(parser.pos - 1, 0)], str(err)) from None
    except _UNEXPECTED as err:  # a check the parser lacks: still say where, never a bare error
        raise parser.error(parser.tokens[max(parser.pos - 1, 0)],
                           f"{type(err).__name__}: {err}") from err


# What a parsing step may raise besides ParseError/IrlabError (a value Python or numpy refused)
_UNEXPECTED = (ValueError, TypeError, KeyError, IndexError, OverflowError, ZeroDivisionError,
               AttributeError)


def parse(text, source_name="from_string", init_module=None, init_meta_table=None) -> IRModule:
    """Parse a module (``def @name(...) {...}`` definitions, as printed by ``print(mod)`` or
    ``mod.astext()``). A bare expression is wrapped as ``@main`` (``IRModule.from_expr``).

    The module is type-checked, as TVM's parser does: its functions come back with ``ret_type``
    and annotated variables, so it compares equal to a module built and run through
    ``InferType``; an ill-typed program raises here, at parse time."""
    from irlab.relay.transform import InferType  # the passes import this module

    mod = _run(text, source_name, init_module, init_meta_table, want_module=True)
    return InferType()(mod)


def parse_expr(text, source_name="from_string", init_meta_table=None):
    """Parse one expression (``free_var`` declarations, bindings, then the expression)."""
    return _run(text, source_name, None, init_meta_table, want_module=False)


fromtext = parse

# irlab's Relay standard library: text files beside this module
STD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "std")


def import_std(mod: IRModule, file_name: str) -> None:
    """Parse ``std/<file_name>`` in the context of ``mod`` and add its definitions to it."""
    path = os.path.join(STD_DIR, os.path.basename(file_name))
    if not os.path.isfile(path):
        known = ", ".join(sorted(f for f in os.listdir(STD_DIR) if f.endswith(".rly")))
        raise IrlabError(f"IRModule.import_from_std: no Relay standard library file "
                         f"{file_name!r} (irlab has {known})")
    with open(path, encoding="utf-8") as f:
        parsed = parse(f.read(), source_name=path, init_module=mod)
    for gtv, data in parsed.type_definitions.items():
        if gtv not in mod:
            mod[gtv] = data
    for gv, func in parsed.functions.items():
        if gv.name_hint not in mod:
            mod[gv] = func


register_func("relay.std.import", import_std)

__all__ = ["parse", "parse_expr", "fromtext", "tokenize", "Token"]
