// SPDX-License-Identifier: MIT
/*
 * deny_syscall - run a command with io_uring syscalls refused by a seccomp
 * filter, as a container runtime would.
 *
 * usage: deny_syscall setup|register ERRNO command [args...]
 *   setup:    io_uring_setup fails with ERRNO (EPERM or ENOSYS)
 *   register: io_uring_register fails with ERRNO (rings work, but no
 *             registered files or buffers)
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned int nr, err;

	if (argc < 4) {
		fprintf(stderr, "usage: %s setup|register EPERM|ENOSYS command...\n",
			argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "setup"))
		nr = __NR_io_uring_setup;
	else if (!strcmp(argv[1], "register"))
		nr = __NR_io_uring_register;
	else
		return 2;
	err = !strcmp(argv[2], "ENOSYS") ? ENOSYS : EPERM;

	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return 77;
	}
	execvp(argv[3], argv + 3);
	perror(argv[3]);
	return 127;
}
