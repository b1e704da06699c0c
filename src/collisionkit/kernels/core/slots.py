"""Calls through a process-wide slot: a kernel calls another without linking it (issue 32).

numba compiles every kernel into a code library of its own and links the library of each
kernel it calls into the caller's, where LLVM optimises and generates machine code for the
whole chain again. Two mechanisms call a compiled kernel through its address instead, and
share what is here:

* ``kernels/core/unlinked.py``: a batch driver calls its chunk kernel;
* ``kernels/core/lazy.py``: a kernel calls an entry declared with its signature (a cold
  path compiled on first need, or a per-task kernel that many callers share).

A *slot* is an int64 published to LLVM under a name that is the same in every process
(made of the callee's module, name and types), so that code loaded from numba's cache
resolves it too. It holds the callee's address; the call is the one numba emits for a
linked callee (its calling convention, status checked, exception propagated), minus the
linking.
"""

from __future__ import annotations

import ctypes
import hashlib
from typing import Any

from llvmlite import binding as llvm
from llvmlite import ir
from numba.core import cgutils

#: slot name -> the int64 holding an address (kept alive: LLVM holds its address)
SLOTS: dict[str, ctypes.c_int64] = {}


def slot_name(kind: str, text: str) -> str:
    """The symbol of a slot: ``collisionkit.<kind>.`` and a digest of ``text`` (the callee's
    qualified name and types: the same in every process, baked into cached code)."""
    return f"collisionkit.{kind}." + hashlib.sha256(text.encode()).hexdigest()[:32]


def new_slot(name: str, address: int = 0) -> ctypes.c_int64:
    """Create and publish the slot ``name`` holding ``address`` (0: not compiled yet)."""
    slot = ctypes.c_int64(address)
    llvm.add_symbol(name, ctypes.addressof(slot))
    SLOTS[name] = slot
    return slot


def compiled_address(dispatcher: Any, argtypes: tuple) -> int:
    """The address of ``dispatcher``'s compiled code for ``argtypes`` (compiled already)."""
    cres = dispatcher.overloads[tuple(argtypes)]
    address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
    if not address:  # pragma: no cover - numba always exposes a compiled function
        raise RuntimeError(f"no compiled code for {dispatcher.py_func.__qualname__}{argtypes}")
    return int(address)


def slot_global(builder: Any, name: str) -> Any:
    """The slot ``name`` in the module being built (a declaration, resolved at load)."""
    module = builder.module
    slot = module.globals.get(name)
    if slot is None:
        slot = cgutils.add_global_variable(module, ir.IntType(64), name)
    return slot


def call_address(context: Any, builder: Any, address: Any, restype: Any, argtypes: tuple, args: list) -> Any:
    """Call the compiled kernel at ``address`` (an i64 value) as numba calls a linked one;
    propagate its exception. Returns its result."""
    fnty = context.call_conv.get_function_type(restype, argtypes)
    fn = builder.inttoptr(address, fnty.as_pointer())
    status, result = context.call_conv.call_function(builder, fn, restype, argtypes, args)
    with cgutils.if_unlikely(builder, status.is_error):
        context.call_conv.return_status_propagate(builder, status)
    return result


__all__ = ["SLOTS", "call_address", "compiled_address", "new_slot", "slot_global", "slot_name"]
