//! The hypervisor's CPUID signature (leaf 0x40000000: `KVMKVMKVM`, `Microsoft Hv`,
//! `VMwareVMware`, `XenVMMXenVMM`, `TCGTCGTCGTCG`, ...), which names the hypervisor when
//! DMI and /sys/hypervisor do not (a Firecracker guest has neither).

/// The 12-byte vendor signature of the hypervisor this runs under, or `None` on bare
/// metal (CPUID.1:ECX bit 31 clear) and off x86.
pub fn hypervisor_signature() -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__cpuid;
        // SAFETY: CPUID exists on every x86_64 CPU and only writes the four registers it
        // returns; leaf 1 and, with the hypervisor bit set, leaf 0x40000000 are defined
        // (a hypervisor reserves 0x40000000-0x400000FF). Newer toolchains declare
        // `__cpuid` safe, older ones (the crate's rust-version) unsafe: hence the allow.
        #[allow(unused_unsafe)]
        let (features, leaf) = unsafe { (__cpuid(1), __cpuid(0x4000_0000)) };
        if features.ecx & (1 << 31) == 0 {
            return None;
        }
        let bytes: Vec<u8> = [leaf.ebx, leaf.ecx, leaf.edx]
            .iter()
            .flat_map(|r| r.to_le_bytes())
            .collect();
        let text = String::from_utf8_lossy(&bytes)
            .trim_end_matches('\0')
            .trim()
            .to_string();
        (!text.is_empty()).then_some(text)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}
