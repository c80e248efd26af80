/* Test-only PID 1 for the testbed kernel: do guest processes keep their vector registers?
 *
 * User-Mode Linux keeps each guest process's FPU state in the kernel and puts it back into the
 * host process that runs it at every switch (kernel/patches/uml-host-xstate.patch says how and
 * why that needed a patch on hosts with AMX). This program, booted as the guest's init, forks
 * two workers. Each loads its own pattern into every vector register the CPU has (zmm0-31 with
 * AVX-512, else ymm0-15 with AVX, else xmm0-15), enters the kernel with sched_yield() (the other
 * worker then runs and loads its pattern), and on return stores the registers and compares them
 * with what it loaded, ROUNDS times with a new pattern each round. Then it prints one line and
 * powers the guest off:
 *
 *     fpstate: <isa> <rounds> rounds, <mismatches> mismatched registers, <crashed> workers crashed
 *
 * Built static by tests/kernel/test_uml_fpu_state.py; not part of the testbed.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 2000
#define MAX_BYTES (32 * 64) /* zmm0-31 */

enum isa { ISA_SSE, ISA_AVX, ISA_AVX512 };

static enum isa detect(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
        return ISA_SSE;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0x6) != 0x6)
        return ISA_SSE;
    __cpuid_count(7, 0, a, b, c, d);
    if ((b & bit_AVX512F) && (lo & 0xe6) == 0xe6)
        return ISA_AVX512;
    return ISA_AVX;
}

static size_t bytes_of(enum isa isa)
{
    return isa == ISA_AVX512 ? 32 * 64 : isa == ISA_AVX ? 16 * 32 : 16 * 16;
}

#define SCHED_YIELD_NR "24" /* x86_64 */

/* Load in[] into the registers, sched_yield(), store the registers into out[]: one asm block
 * per instruction set, so that no compiler-generated code touches the registers in between. Each
 * is compiled for its own instruction set only (target attribute), and called only where the CPU
 * and the kernel have it (detect()). */
__attribute__((target("avx512f"), noinline)) static void round_trip_avx512(const uint8_t* in, uint8_t* out)
{
    __asm__ volatile(
#define L(n) "vmovdqu64 " #n "*64(%0), %%zmm" #n "\n\t"
        L(0) L(1) L(2) L(3) L(4) L(5) L(6) L(7) L(8) L(9) L(10) L(11) L(12) L(13) L(14) L(15)
        L(16) L(17) L(18) L(19) L(20) L(21) L(22) L(23) L(24) L(25) L(26) L(27) L(28) L(29) L(30) L(31)
#undef L
        "mov $" SCHED_YIELD_NR ", %%eax\n\t"
        "syscall\n\t"
#define S(n) "vmovdqu64 %%zmm" #n ", " #n "*64(%1)\n\t"
        S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8) S(9) S(10) S(11) S(12) S(13) S(14) S(15)
        S(16) S(17) S(18) S(19) S(20) S(21) S(22) S(23) S(24) S(25) S(26) S(27) S(28) S(29) S(30) S(31)
#undef S
        "vzeroupper\n\t"
        :
        : "r"(in), "r"(out)
        : "rax", "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
          "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",
          "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");
}

__attribute__((target("avx"), noinline)) static void round_trip_avx(const uint8_t* in, uint8_t* out)
{
    __asm__ volatile(
#define L(n) "vmovdqu " #n "*32(%0), %%ymm" #n "\n\t"
        L(0) L(1) L(2) L(3) L(4) L(5) L(6) L(7) L(8) L(9) L(10) L(11) L(12) L(13) L(14) L(15)
#undef L
        "mov $" SCHED_YIELD_NR ", %%eax\n\t"
        "syscall\n\t"
#define S(n) "vmovdqu %%ymm" #n ", " #n "*32(%1)\n\t"
        S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8) S(9) S(10) S(11) S(12) S(13) S(14) S(15)
#undef S
        "vzeroupper\n\t"
        :
        : "r"(in), "r"(out)
        : "rax", "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
          "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

__attribute__((noinline)) static void round_trip_sse(const uint8_t* in, uint8_t* out)
{
    __asm__ volatile(
#define L(n) "movdqu " #n "*16(%0), %%xmm" #n "\n\t"
        L(0) L(1) L(2) L(3) L(4) L(5) L(6) L(7) L(8) L(9) L(10) L(11) L(12) L(13) L(14) L(15)
#undef L
        "mov $" SCHED_YIELD_NR ", %%eax\n\t"
        "syscall\n\t"
#define S(n) "movdqu %%xmm" #n ", " #n "*16(%1)\n\t"
        S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8) S(9) S(10) S(11) S(12) S(13) S(14) S(15)
#undef S
        :
        : "r"(in), "r"(out)
        : "rax", "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
          "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

static void round_trip(enum isa isa, const uint8_t* in, uint8_t* out)
{
    if (isa == ISA_AVX512)
        round_trip_avx512(in, out);
    else if (isa == ISA_AVX)
        round_trip_avx(in, out);
    else
        round_trip_sse(in, out);
}

/* One worker: ROUNDS round trips; the exit status is the number of mismatched registers (capped). */
static int worker(enum isa isa, uint64_t seed)
{
    static uint8_t in[MAX_BYTES] __attribute__((aligned(64))), out[MAX_BYTES] __attribute__((aligned(64)));
    size_t n = bytes_of(isa), reg = n / (isa == ISA_AVX512 ? 32 : 16);
    unsigned mismatched = 0;
    uint64_t x = seed;
    for (int r = 0; r < ROUNDS; r++)
    {
        for (size_t i = 0; i < n; i += 8)
        {
            x += 0x9e3779b97f4a7c15ULL; /* SplitMix64 */
            uint64_t z = x;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            z ^= z >> 31;
            memcpy(in + i, &z, 8);
        }
        memset(out, 0, n);
        round_trip(isa, in, out);
        for (size_t i = 0; i < n; i += reg)
            mismatched += memcmp(in + i, out + i, reg) != 0;
    }
    return mismatched > 250 ? 250 : (int)mismatched;
}

int main(void)
{
    enum isa isa = detect();
    const char* name = isa == ISA_AVX512 ? "avx512" : isa == ISA_AVX ? "avx" : "sse";
    pid_t pids[2];
    for (int k = 0; k < 2; k++)
    {
        pids[k] = fork();
        if (pids[k] == 0)
            _exit(worker(isa, 1000003ULL * (k + 1)));
    }
    int mismatched = 0, crashed = 0;
    for (int k = 0; k < 2; k++)
    {
        int status = 0;
        if (pids[k] < 0 || waitpid(pids[k], &status, 0) < 0 || !WIFEXITED(status))
            crashed++;
        else
            mismatched += WEXITSTATUS(status);
    }
    printf("fpstate: %s %d rounds, %d mismatched registers, %d workers crashed\n", name, ROUNDS, mismatched,
           crashed);
    fflush(stdout);
    sync();
    reboot(RB_POWER_OFF);
    return 0;
}
