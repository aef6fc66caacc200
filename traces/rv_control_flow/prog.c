/* Control flow and local RAM: an insertion sort and a quicksort (recursion: jal/jalr, stack in local
 * RAM) of 64 words copied into .bss, a switch-table interpreter of a small bytecode (indirect
 * jumps), and a .data table updated in place. */
#include <stdint.h>

#define IN ((const volatile uint32_t *)0x30000u)
#define OUT ((volatile uint32_t *)0x40000u)
#define N 64

static uint32_t a[N], b[N];
static uint32_t table[8] = {3, 1, 4, 1, 5, 9, 2, 6};

static void quicksort(uint32_t *v, int lo, int hi)
{
    if (lo >= hi)
        return;
    uint32_t pivot = v[(lo + hi) / 2];
    int i = lo, j = hi;
    while (i <= j) {
        while ((int32_t)v[i] < (int32_t)pivot)
            i++;
        while ((int32_t)v[j] > (int32_t)pivot)
            j--;
        if (i <= j) {
            uint32_t t = v[i];
            v[i++] = v[j];
            v[j--] = t;
        }
    }
    quicksort(v, lo, j);
    quicksort(v, i, hi);
}

static uint32_t interpret(const uint32_t *code, uint32_t n, uint32_t x)
{
    for (uint32_t pc = 0; pc < n; pc++) {
        uint32_t op = code[pc] & 7u, arg = code[pc] >> 3;
        switch (op) {
        case 0: x += arg; break;
        case 1: x ^= arg << 7; break;
        case 2: x = (x << 3) | (x >> 29); break;
        case 3: x *= arg | 1u; break;
        case 4: x -= table[arg & 7u]; break;
        case 5: table[arg & 7u] += x; break;
        case 6: if (x & 1u) pc++; break;
        default: x = ~x; break;
        }
    }
    return x;
}

int main(void)
{
    for (int i = 0; i < N; i++)
        a[i] = b[i] = IN[i];
    for (int i = 1; i < N; i++) { /* insertion sort, unsigned */
        uint32_t v = a[i];
        int j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
    quicksort(b, 0, N - 1);
    for (int i = 0; i < N; i++) {
        OUT[i] = a[i];
        OUT[N + i] = b[i];
    }
    for (uint32_t k = 0; k < 16u; k++)
        OUT[2 * N + k] = interpret((const uint32_t *)IN, N, k * 0x01000193u);
    for (int i = 0; i < 8; i++)
        OUT[2 * N + 16 + i] = table[i];
    return 0;
}
