/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-pvprof's string interning: one copy of each string, so that the same
 * text gives the same pointer and names compare by address (the profile's
 * call tree and function table).
 */
#ifndef KVM_PVPROF_INTERN_H
#define KVM_PVPROF_INTERN_H

struct intern_table;

struct intern_table *intern_new(void);
const char *intern(struct intern_table *t, const char *s);
void intern_free(struct intern_table *t);

#endif /* KVM_PVPROF_INTERN_H */
