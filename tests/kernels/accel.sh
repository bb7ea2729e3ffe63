# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/kernels/matrix.sh and tests/service/run.sh: qemu's accelerator and CPU for
# the stock kernels they boot.
accel() {
	# kvm_pvm (this project's own VMs) runs only kernels built for it: KVM only with kvm_intel or kvm_amd.
	if [ -w /dev/kvm ] && grep -qsE '^(kvm_intel|kvm_amd) ' /proc/modules; then
		echo "-accel kvm -cpu host"
	else
		# One host thread runs both vCPUs: with a thread per vCPU (MTTCG) a 6.12 guest
		# once died at boot on an int3 that another vCPU had already patched away
		# (a static key flipped during an initcall), before the suite began.
		echo "-accel tcg,thread=single -cpu max"
	fi
}
