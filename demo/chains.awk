# SPDX-License-Identifier: GPL-2.0
# Folds perf-script-format output into the call chains the unwinding suite
# compares: the guest's `perf script --no-inline -F ip,sym,dso` and
# `kvm-pvprof script` read the same way (busybox awk in the guest; gawk and
# mawk too). A sample's chain is made of its frames in the program DSO
# (only those named in FUNCTIONS, when given: a static program's DSO holds
# glibc too) and in the vDSO (as one "[vdso]"), outermost first; its leaf
# is the chain's innermost frame. Kernel and library frames between them
# do not count, so an unwinder that loses a caller, or stops early, shows as
# a different chain. Prints one "PREFIX LEAF CHAIN COUNT" line per distinct
# chain (leaf and chain "-" for a sample with none), then "PREFIX-SAMPLES N"
# ("SAMPLES N" without a prefix).
#
# Only the samples of processes named COMM count (the sample's first line
# starts with the command name in both formats).
#
# usage: awk -v dso=PROGRAM -v comm=COMM [-v functions=FILE] [-v prefix=WORD] -f chains.awk FILE

BEGIN {
	if (functions != "")
		while ((getline line < functions) > 0)
			wanted[line] = 1
	if (prefix != "")
		prefix = prefix " "
}

function flush(   chain, i, last, token) {
	if (frames == 0)
		return
	chain = ""
	last = "-"
	for (i = frames; i >= 1; i--) {
		if (owner[i] == "[vdso]")
			token = "[vdso]"
		else if (owner[i] == dso && (functions == "" || name[i] in wanted))
			token = name[i]
		else
			continue
		if (token == "[vdso]" && last == "[vdso]")
			continue
		chain = chain (chain == "" ? "" : ";") token
		last = token
	}
	if (chain == "")
		chain = "-"
	count[last " " chain]++
	samples++
	frames = 0
}

/^[^ \t]/ {
	flush()
	mine = $1 == comm
	next
}
/^[ \t]+[0-9a-f]+ / {
	if (!mine)
		next
	# "<ip> <symbol>[+0xOFF] (<dso>)"; symbols may hold spaces, DSOs not.
	frames++
	owner[frames] = $NF
	gsub(/^\(|\)$/, "", owner[frames])
	sym = $0
	sub(/^[ \t]+[0-9a-f]+ /, "", sym)
	sub(/ \([^ ]*\)$/, "", sym)
	sub(/\+0x[0-9a-f]+$/, "", sym)
	name[frames] = sym
	next
}
NF == 0 { flush() }
END {
	flush()
	for (key in count)
		print prefix key " " count[key]
	tag = prefix == "" ? "SAMPLES" : substr(prefix, 1, length(prefix) - 1) "-SAMPLES"
	print tag " " samples + 0
}
