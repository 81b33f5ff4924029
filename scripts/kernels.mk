# SPDX-License-Identifier: GPL-2.0
# The kernels pvprof builds for and boots besides Debian 12's default (6.1):
# KVER=6.12 stands for Debian 12's security suite's 6.12, package version
# 6.12.117-1~deb12u1 (Debian 13 and RHEL 10 run the 6.12 series).
# Included by the Makefiles; tests/nested/common.sh reads it too.
KVER_6.12	:= 6.12.117+deb12-amd64
