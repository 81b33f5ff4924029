/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof report and script: the escaping every guest string goes
 * through.
 *
 * Symbols, DSO paths and command names come from the guest: any byte but
 * NUL, any length.  Each writer escapes them for its format (terminal,
 * folded stacks, perf script, SVG) and caps them at REPORT_NAME_MAX bytes.
 */
#ifndef KVM_PVPROF_REPORT_ESCAPE_H
#define KVM_PVPROF_REPORT_ESCAPE_H

/* Longest guest string shown, in bytes before escaping. */
#define REPORT_NAME_MAX		255

/* Each returns @out, always NUL-terminated. */
#define REPORT_ESC_SIZE		(REPORT_NAME_MAX * 6 + 8)
char *esc_text(const char *s, char *out);
char *esc_folded(const char *s, char *out);
char *esc_script(const char *s, char *out);
char *esc_xml(const char *s, char *out);

#endif /* KVM_PVPROF_REPORT_ESCAPE_H */
