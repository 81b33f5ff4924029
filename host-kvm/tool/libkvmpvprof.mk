# SPDX-License-Identifier: GPL-2.0
#
# The host tool's code as a static library, for the programs built on it
# outside host-kvm/tool: the fuzzers (tests/fuzz), the symbolizer's unit
# test (tests/unit), sb-check (guest-agent/tests/agent-nested.sh).
# host-kvm/tool/Makefile includes this file and builds the library:
#
#   make -C host-kvm/tool O=... lib         build $(TOOL_LIB)
#   make -s -C host-kvm/tool print-libs     print $(TOOL_LIBS), for scripts
#
# The library holds every object of the tool but main.o, with the shared
# core and pprof's generated code: a program links $(TOOL_LIB) $(TOOL_LIBS)
# and no source of the tool.  Makefiles include this file for the names.

TOOL_DIR	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
# Under the tool's build directory, $(O)/tool unless BUILD says otherwise.
TOOL_LIB	= $(O)/tool/libkvmpvprof.a
# What the library links against: libdw and libelf (the DWARF unwinder,
# build-ids), protobuf-c and zlib (report --pprof).
TOOL_LIBS	:= -ldw -lelf -lprotobuf-c -lz
