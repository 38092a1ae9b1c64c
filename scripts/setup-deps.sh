#!/bin/sh
# Installs the host packages lab needs on Debian 12, as root. Idempotent:
# apt is only run when something is missing.
#
#   setup-deps.sh        everything: booting guests, building lab and its
#                        plugins, building era kernels, the tests' tools
#   setup-deps.sh boot   only booting guests and building lab and its
#                        plugins (what `make demo` needs: on a fresh
#                        Debian the rest is about half the download)
set -eu
what=${1:-all}
case $what in all | boot) ;; *)
	echo "usage: $0 [all|boot]" >&2
	exit 2
	;;
esac
need=""
# Booting guests and building lab, its agents and its plugins' workloads.
# QEMU's recommends (a GUI, qemu-utils, OVMF, block drivers) are not
# installed: lab boots with -display none from -kernel, and they are most
# of QEMU's download.
command -v qemu-system-i386 >/dev/null 2>&1 || need="$need qemu-system-x86"
command -v i686-linux-gnu-gcc >/dev/null 2>&1 || need="$need gcc-i686-linux-gnu"
command -v i686-linux-gnu-strip >/dev/null 2>&1 || need="$need binutils-i686-linux-gnu"
[ -e /usr/i686-linux-gnu/lib/libc.a ] || need="$need libc6-dev-i386-cross"
command -v gcc >/dev/null 2>&1 || need="$need gcc"
[ -e /usr/lib/x86_64-linux-gnu/libc.a ] || need="$need libc6-dev"
command -v dpkg-deb >/dev/null 2>&1 || need="$need dpkg"
more=""
if [ "$what" = all ]; then
	# Building era kernels from Debian's kernel source and 2.6.32 from its
	# upstream release (`lab image build`, or the first boot of a profile).
	command -v make >/dev/null 2>&1 || more="$more make"
	command -v flex >/dev/null 2>&1 || more="$more flex"
	command -v bison >/dev/null 2>&1 || more="$more bison"
	command -v bc >/dev/null 2>&1 || more="$more bc"
	command -v lz4 >/dev/null 2>&1 || more="$more lz4"
	command -v xz >/dev/null 2>&1 || more="$more xz-utils"
	# Upstream releases (linux-2.6.32-*) get lab's patches applied.
	command -v patch >/dev/null 2>&1 || more="$more patch"
	command -v git >/dev/null 2>&1 || more="$more git"
	[ -e /usr/include/gelf.h ] || more="$more libelf-dev"
	[ -e /usr/include/openssl/ssl.h ] || more="$more libssl-dev"
	# protoc, for `make proto` and the test that checks plugins/wire is current.
	command -v protoc >/dev/null 2>&1 || more="$more protobuf-compiler"
	# A real browser for the test that renders `lab report` (headless).
	command -v chromium >/dev/null 2>&1 || more="$more chromium"
fi
# i386 multiarch: the 686 kernel and busybox-static:i386 are downloaded (never
# installed) from the i386 lists.
if ! dpkg --print-foreign-architectures | grep -qx i386; then
	dpkg --add-architecture i386
	fresh=1
fi
if [ -n "$need$more" ] || [ "${fresh:-0}" = 1 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "setup: missing packages:$need$more; run 'make setup' as root" >&2
		exit 1
	fi
	# One i386 index fails to download on some mirrors and apt-get update
	# then exits 100 although the main lists arrived: tolerate that, the
	# installs and downloads below are checked themselves.
	apt-get update -q || [ $? = 100 ]
	if [ -n "$need" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need
	fi
	if [ -n "$more" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $more
	fi
fi
echo "setup: host packages present"
