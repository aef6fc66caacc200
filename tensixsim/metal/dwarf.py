"""What a firmware ELF's debug information says about its data layout.

tt-metal firmware is built with DWARF 5. The mailbox layout (``mailboxes_t``, ``go_msg_t``,
``launch_msg_t``), the run-state enumerators (``RUN_MSG_GO``, ``RUN_SYNC_MSG_DONE``, ...) and the
constants folded into the code (the L1 address of the mailbox, the L1 address a core's start-up code
copies its local-RAM image from) all change between tt-metal versions, so they are read from the ELF
that is being run rather than written down here.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from elftools.dwarf.die import DIE
from elftools.dwarf.dwarf_expr import DWARFExprParser
from elftools.dwarf.locationlists import LocationEntry, LocationExpr
from elftools.dwarf.ranges import BaseAddressEntry
from elftools.elf.elffile import ELFFile

from tensixsim.errors import InvalidProgram
from tensixsim.native_build import cache_dir

T = TypeVar("T")
_STRUCTS = ("DW_TAG_structure_type", "DW_TAG_union_type", "DW_TAG_class_type")
_TRANSPARENT = ("DW_TAG_typedef", "DW_TAG_volatile_type", "DW_TAG_const_type")
_PATH_PART = re.compile(r"([A-Za-z_]\w*)((?:\[\d+\])*)")


@dataclass(frozen=True)
class Field:
    """Where a (possibly nested) member lies: byte offset from the start of its outer type, size."""

    offset: int
    size: int


class DebugInfo:
    """Types, enumerators and constants of one firmware ELF.

    Indexing every DIE of a firmware ELF takes a large part of a second, and the same few answers are
    asked for on every launch, so answers are kept on disk (``~/.cache/tensixsim/dwarf-<hash of the
    ELF and of this module>.json``) and the ELF is only parsed for a question not answered before.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._bytes = path.read_bytes()
        # Keyed by the ELF and by this file: answers computed by other code are not reused.
        key = hashlib.sha256(self._bytes + Path(__file__).read_bytes()).hexdigest()[:24]
        self._memo_path = cache_dir() / f"dwarf-{key}.json"
        try:
            self._memo: dict[str, Any] = json.loads(self._memo_path.read_text())
        except (OSError, ValueError):
            self._memo = {}
        self._indexed = False

    def _index_all(self) -> None:
        if self._indexed:
            return
        self._elf = ELFFile(io.BytesIO(self._bytes))
        if not self._elf.has_dwarf_info():
            raise InvalidProgram(f"{self.path}: no debug information (tt-metal firmware is built with DWARF)")
        self._dwarf = self._elf.get_dwarf_info()
        self.types: dict[str, DIE] = {}
        self.enumerators: dict[str, int] = {}
        self.constants: dict[str, int] = {}
        self.variables: dict[str, DIE] = {}
        self._inlined: list[DIE] = []
        for cu in self._dwarf.iter_CUs():
            for die in cu.iter_DIEs():
                self._index(die)
        self._indexed = True

    def _answer(self, question: str, compute: Callable[[], T], *, index: bool = True) -> T:
        """The remembered answer to ``question``, or ``compute()`` on the indexed ELF (remembered; an
        error is raised each time, not remembered). ``index=False``: ``compute`` needs no DIE index
        (it reads the ELF itself)."""
        if question in self._memo:
            return self._memo[question]
        if index:
            self._index_all()
        answer = compute()
        self._memo[question] = answer
        try:  # written whole under a private name, then renamed: readers never see half a file
            self._memo_path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(suffix=".json", dir=self._memo_path.parent)
            with os.fdopen(fd, "w") as out:
                json.dump(self._memo, out)
            os.replace(tmp, self._memo_path)
        except OSError:
            pass  # an unwritable cache only costs the parse next time
        return answer

    # ------------------------------------------------------------------ code addresses
    def line_table(self) -> dict[str, list]:
        """Where the code came from, for naming the source of a pc.

        ``{"files": [path, ...], "rows": [[address, file index, line], ...], "functions": [[start,
        end, name], ...]}``, both lists sorted by address. A row holds from its address up to the
        next row's; a row with line 0 ends a sequence (addresses past it have no line). Functions
        come from the symbol table, so an ELF without DWARF still names them.
        """
        return self._answer("line_table", self._line_table, index=False)

    def _line_table(self) -> dict[str, list]:
        elf = ELFFile(io.BytesIO(self._bytes))
        functions = _functions(elf)
        files: dict[str, int] = {}
        rows: list[list[int]] = []
        if elf.has_dwarf_info():
            dwarf = elf.get_dwarf_info()
            for cu in dwarf.iter_CUs():
                program = dwarf.line_program_for_CU(cu)
                if program is None:
                    continue
                names = _line_program_files(cu, program)
                for entry in program.get_entries():
                    state = entry.state
                    if state is None:
                        continue
                    if state.end_sequence:
                        rows.append([state.address, -1, 0])
                        continue
                    path = names.get(state.file, "?")
                    rows.append([state.address, files.setdefault(path, len(files)), state.line])
        # A sequence's end and the next one's start can share an address: the start wins.
        rows.sort(key=lambda row: (row[0], row[2] != 0))
        return {"files": list(files), "rows": rows, "functions": functions}

    def has_variable(self, name: str) -> bool:
        return self._answer(f"has_variable:{name}", lambda: name in self.variables)

    def constant_names(self) -> list[str]:
        """The names of the constant-valued variables."""
        return self._answer("constant_names", lambda: sorted(self.constants))

    def _index(self, die: DIE) -> None:
        tag = die.tag
        name_attr = die.attributes.get("DW_AT_name")
        name = name_attr.value.decode() if name_attr is not None else None
        if tag in _STRUCTS or tag == "DW_TAG_typedef":
            if name and not die.attributes.get("DW_AT_declaration"):
                self.types.setdefault(name, die)
        elif tag == "DW_TAG_enumerator" and name:
            value = die.attributes["DW_AT_const_value"].value
            self.enumerators.setdefault(name, value)
            parent = die.get_parent()
            enum_name = parent.attributes.get("DW_AT_name") if parent is not None else None
            if enum_name is not None:  # bare names collide (several enums have a COUNT)
                self.enumerators.setdefault(f"{enum_name.value.decode()}::{name}", value)
        elif tag == "DW_TAG_variable" and name and "DW_AT_const_value" in die.attributes:
            value = die.attributes["DW_AT_const_value"].value
            if isinstance(value, int):
                self.constants.setdefault(name, value)
        elif tag == "DW_TAG_variable" and name and "DW_AT_type" in die.attributes:
            self.variables.setdefault(name, die)
        elif tag == "DW_TAG_inlined_subroutine":
            self._inlined.append(die)

    # ------------------------------------------------------------------ types
    def array_length(self, variable: str) -> int:
        """The element count of a global array variable (``cb_interface[NUM_CIRCULAR_BUFFERS]``)."""
        return self._answer(f"array_length:{variable}", lambda: self._array_length(variable))

    def _array_length(self, variable: str) -> int:
        die = self.variables.get(variable)
        if die is None:
            raise InvalidProgram(f"{self.path}: no variable {variable} in the debug information")
        array = self._strip(die.get_DIE_from_attribute("DW_AT_type"))
        if array.tag != "DW_TAG_array_type":
            raise InvalidProgram(f"{self.path}: {variable} is not an array")
        return self._size(array) // self._size(array.get_DIE_from_attribute("DW_AT_type"))

    def enumerator(self, name: str) -> int:
        return self._answer(f"enumerator:{name}", lambda: self._enumerator(name))

    def _enumerator(self, name: str) -> int:
        try:
            return self.enumerators[name]
        except KeyError:
            raise InvalidProgram(f"{self.path}: no enumerator {name} in the debug information") from None

    def constant(self, name: str) -> int:
        """A constant-valued variable (``mailboxes_t* const mailboxes = (mailboxes_t*)96``)."""
        return self._answer(f"constant:{name}", lambda: self._constant(name))

    def _constant(self, name: str) -> int:
        try:
            return self.constants[name]
        except KeyError:
            raise InvalidProgram(f"{self.path}: no constant {name} in the debug information") from None

    def size_of(self, type_name: str) -> int:
        return self._answer(f"size_of:{type_name}", lambda: self._size(self._type(type_name)))

    def has_field(self, type_name: str, path: str) -> bool:
        """Whether ``type_name`` has the member ``path`` (firmware generations differ in what they have)."""
        return self._answer(f"has_field:{type_name}:{path}", lambda: self._has_field(type_name, path))

    def _has_field(self, type_name: str, path: str) -> bool:
        try:
            self._field(type_name, path)
        except InvalidProgram:
            return False
        return True

    def field(self, type_name: str, path: str) -> Field:
        """Offset and size of ``path`` (``"go_messages[0].signal"``) inside ``type_name``."""
        offset, size = self._answer(f"field:{type_name}:{path}", lambda: list(self._field(type_name, path)))
        return Field(offset, size)

    def _field(self, type_name: str, path: str) -> tuple[int, int]:
        die = self._type(type_name)
        offset = 0
        for part in path.split("."):
            match = _PATH_PART.fullmatch(part)
            if match is None:
                raise ValueError(f"bad member path {path!r}")
            found = self._member(die, match.group(1))
            if found is None:
                raise InvalidProgram(f"{self.path}: {type_name} has no member {path!r}")
            member, shift = found
            location = member.attributes.get("DW_AT_data_member_location")
            offset += shift + (location.value if location is not None else 0)
            die = self._strip(member.get_DIE_from_attribute("DW_AT_type"))
            for index in re.findall(r"\[(\d+)\]", match.group(2)):
                if die.tag != "DW_TAG_array_type":
                    raise InvalidProgram(f"{self.path}: {path!r}: {match.group(1)} is not an array")
                element = self._strip(die.get_DIE_from_attribute("DW_AT_type"))
                count = self._size(die) // self._size(element)
                if int(index) >= count:  # generations differ in array lengths, too
                    raise InvalidProgram(
                        f"{self.path}: {type_name}: {match.group(1)} has {count} elements, no [{index}]"
                    )
                offset += int(index) * self._size(element)
                die = element
        return offset, self._size(die)

    def _type(self, name: str) -> DIE:
        try:
            return self._strip(self.types[name])
        except KeyError:
            raise InvalidProgram(f"{self.path}: no type {name} in the debug information") from None

    def _strip(self, die: DIE) -> DIE:
        while die.tag in _TRANSPARENT:
            die = die.get_DIE_from_attribute("DW_AT_type")
        return die

    def _member(self, die: DIE, name: str) -> tuple[DIE, int] | None:
        """The member ``name`` of ``die`` and the offset of the anonymous aggregate holding it."""
        for child in die.iter_children():
            if child.tag != "DW_TAG_member":
                continue
            attr = child.attributes.get("DW_AT_name")
            if attr is not None and attr.value.decode() == name:
                return child, 0
            if attr is None:  # an anonymous struct or union: its members belong to the outer type
                inner = self._strip(child.get_DIE_from_attribute("DW_AT_type"))
                found = self._member(inner, name)
                if found is not None:
                    location = child.attributes.get("DW_AT_data_member_location")
                    return found[0], found[1] + (location.value if location is not None else 0)
        return None

    def _size(self, die: DIE) -> int:
        die = self._strip(die)
        if "DW_AT_byte_size" in die.attributes:
            return die.attributes["DW_AT_byte_size"].value
        if die.tag == "DW_TAG_array_type":
            count = 1
            for sub in die.iter_children():
                if sub.tag == "DW_TAG_subrange_type":
                    if "DW_AT_count" in sub.attributes:
                        count *= sub.attributes["DW_AT_count"].value
                    elif "DW_AT_upper_bound" in sub.attributes:
                        # A zero-length array has upper bound -1 (stored as 0xffffffff).
                        count *= (sub.attributes["DW_AT_upper_bound"].value + 1) & 0xFFFFFFFF
                    else:
                        count = 0  # flexible array member
            return count * self._size(die.get_DIE_from_attribute("DW_AT_type"))
        raise InvalidProgram(f"{self.path}: cannot size a {die.tag}")

    # ------------------------------------------------------------------ folded constants
    def inlined_argument(self, function: str, parameter: str) -> int:
        """The constant ``parameter`` had at an inlined call of ``function`` (all calls must agree).

        tt-metal's start-up code passes the L1 address of a core's local-RAM image to ``do_crt1`` as a
        compile-time constant; the compiler records it as the parameter's location (a constant with
        ``DW_OP_stack_value``).
        """
        question = f"inlined_argument:{function}:{parameter}"
        return self._answer(question, lambda: self._inlined_argument(function, parameter))

    def _inlined_argument(self, function: str, parameter: str) -> int:
        values: set[int] = set()
        for call in self._inlined:
            if _name_of(call) != function:
                continue
            for child in call.iter_children():
                if child.tag == "DW_TAG_formal_parameter" and _name_of(child) == parameter:
                    values.update(self._constant_locations(child))
        if len(values) != 1:
            found = ", ".join(f"0x{v:x}" for v in sorted(values)) or "none"
            raise InvalidProgram(
                f"{self.path}: cannot read the constant argument {parameter} of {function} (found {found})"
            )
        return values.pop()

    def inlined_ranges(self, function: str) -> list[tuple[int, int]]:
        """The code address ranges ``[start, end)`` of every inlined copy of ``function``, sorted."""
        question = f"inlined_ranges:{function}"
        return [tuple(r) for r in self._answer(question, lambda: self._inlined_ranges(function))]

    def _inlined_ranges(self, function: str) -> list[list[int]]:
        spans: set[tuple[int, int]] = set()
        for call in self._inlined:
            if _name_of(call) != function:
                continue
            low = call.attributes.get("DW_AT_low_pc")
            high = call.attributes.get("DW_AT_high_pc")
            if low is not None and high is not None:
                # DWARF 4+: a constant-class high_pc is the length, an address-class one the end.
                end = high.value if high.form == "DW_FORM_addr" else low.value + high.value
                spans.add((low.value, end))
            elif "DW_AT_ranges" in call.attributes:
                offset = call.attributes["DW_AT_ranges"].value
                top = call.cu.get_top_DIE().attributes.get("DW_AT_low_pc")
                base = top.value if top is not None else 0  # relative entries count from here
                for entry in self._dwarf.range_lists().get_range_list_at_offset(offset, cu=call.cu):
                    if isinstance(entry, BaseAddressEntry):
                        base = entry.base_address
                    elif entry.is_absolute:
                        spans.add((entry.begin_offset, entry.end_offset))
                    else:
                        spans.add((base + entry.begin_offset, base + entry.end_offset))
        if not spans:
            raise InvalidProgram(f"{self.path}: no inlined copy of {function} with a code range")
        return [list(s) for s in sorted(spans)]

    def _constant_locations(self, die: DIE) -> set[int]:
        attr = die.attributes.get("DW_AT_location")
        if attr is None:
            if "DW_AT_const_value" in die.attributes:
                return {die.attributes["DW_AT_const_value"].value}
            return set()
        parser = DWARFExprParser(die.dwarfinfo.structs)
        lists = self._dwarf.location_lists()
        if attr.form in ("DW_FORM_sec_offset", "DW_FORM_loclistx"):
            entries = lists.get_location_list_at_offset(attr.value, die=die)
            exprs = [e.loc_expr for e in entries if isinstance(e, LocationEntry)]
        else:
            exprs = [LocationExpr(attr.value).loc_expr]
        values = set()
        for expr in exprs:
            ops = parser.parse_expr(expr)
            if (
                len(ops) == 2
                and ops[1].op_name == "DW_OP_stack_value"
                and ops[0].op_name.startswith(("DW_OP_const", "DW_OP_lit"))
            ):
                first = ops[0]
                values.add(first.args[0] if first.args else int(first.op_name[len("DW_OP_lit") :]))
        return values


def _functions(elf: ELFFile) -> list[list]:
    """[start, end, name] of every function symbol with a size, sorted."""
    symtab = elf.get_section_by_name(".symtab")
    if symtab is None or not hasattr(symtab, "iter_symbols"):
        return []
    found = {}
    for symbol in symtab.iter_symbols():
        if symbol.name and symbol["st_info"]["type"] == "STT_FUNC" and symbol["st_size"]:
            found.setdefault(
                symbol["st_value"], [symbol["st_value"], symbol["st_value"] + symbol["st_size"], symbol.name]
            )
    return sorted(found.values())


def _line_program_files(cu: Any, program: Any) -> dict[int, str]:
    """File index -> path, as the line program of ``cu`` numbers its files (from 1 before DWARF 5,
    from 0 since), joined to their directory and the compilation directory."""
    header = program.header
    version = header["version"]
    top = cu.get_top_DIE()
    comp_dir_attr = top.attributes.get("DW_AT_comp_dir")
    comp_dir = comp_dir_attr.value.decode(errors="replace") if comp_dir_attr is not None else ""
    directories = [_text(d) for d in header["include_directory"]]
    if version < 5:
        directories = [comp_dir, *directories]
    first = 0 if version >= 5 else 1
    names = {}
    for index, entry in enumerate(header["file_entry"], start=first):
        directory = directories[entry.dir_index] if entry.dir_index < len(directories) else ""
        path = os.path.join(comp_dir, directory, _text(entry.name))
        names[index] = os.path.normpath(path)
    return names


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _name_of(die: DIE) -> str | None:
    """A DIE's name, following the abstract-origin / specification links of inlined copies."""
    for _ in range(8):  # links never chain deeper than a few steps
        name = die.attributes.get("DW_AT_name")
        if name is not None:
            return name.value.decode()
        link = next(
            (a for a in ("DW_AT_abstract_origin", "DW_AT_specification") if a in die.attributes), None
        )
        if link is None:
            return None
        die = die.get_DIE_from_attribute(link)
    return None
