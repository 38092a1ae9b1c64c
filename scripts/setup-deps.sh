#!/bin/sh
# Installs the host packages lab needs on Debian 12, as root. Idempotent:
# apt is only run when something is missing.
set -eu
need=""
command -v qemu-system-i386 >/dev/null 2>&1 || need="$need qemu-system-x86"
command -v i686-linux-gnu-gcc >/dev/null 2>&1 || need="$need gcc-i686-linux-gnu"
command -v i686-linux-gnu-strip >/dev/null 2>&1 || need="$need binutils-i686-linux-gnu"
[ -e /usr/i686-linux-gnu/lib/libc.a ] || need="$need libc6-dev-i386-cross"
command -v gcc >/dev/null 2>&1 || need="$need gcc"
[ -e /usr/lib/x86_64-linux-gnu/libc.a ] || need="$need libc6-dev"
command -v dpkg-deb >/dev/null 2>&1 || need="$need dpkg"
# Building era kernels from Debian's kernel source (`lab image build`).
command -v make >/dev/null 2>&1 || need="$need make"
command -v flex >/dev/null 2>&1 || need="$need flex"
command -v bison >/dev/null 2>&1 || need="$need bison"
command -v bc >/dev/null 2>&1 || need="$need bc"
command -v lz4 >/dev/null 2>&1 || need="$need lz4"
command -v xz >/dev/null 2>&1 || need="$need xz-utils"
[ -e /usr/include/gelf.h ] || need="$need libelf-dev"
[ -e /usr/include/openssl/ssl.h ] || need="$need libssl-dev"
# protoc, for `make proto` and the test that checks plugins/wire is current.
command -v protoc >/dev/null 2>&1 || need="$need protobuf-compiler"
# A real browser for the test that renders `lab report` (headless).
command -v chromium >/dev/null 2>&1 || need="$need chromium"
# i386 multiarch: the 686 kernel and busybox-static:i386 are downloaded (never
# installed) from the i386 lists.
if ! dpkg --print-foreign-architectures | grep -qx i386; then
	dpkg --add-architecture i386
	fresh=1
fi
if [ -n "$need" ] || [ "${fresh:-0}" = 1 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "setup: missing packages:$need; run 'make setup' as root" >&2
		exit 1
	fi
	# One i386 index fails to download on some mirrors and apt-get update
	# then exits 100 although the main lists arrived: tolerate that, the
	# installs and downloads below are checked themselves.
	apt-get update -q || [ $? = 100 ]
	if [ -n "$need" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need
	fi
fi
echo "setup: host packages present"
