/* Instruction dispatch of the native engine: opcode -> handler; everything else defers to Python. */
#include "ops.h"

int64_t tsim_native_op(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    (void)cycle; /* no native handler depends on the issue cycle */
    if (thread >= v->threads)
        return NATIVE_DEFER; /* every handler indexes per-pipe state with it */
    switch (OPCODE_OF(word)) {
    case OP_NOP: /* frontend.py nop: Retire(1), the default */
        return TIMING_RETIRE_DEFAULT;

    case OP_DMANOP: return thcon_dmanop(v, thread, word);
#ifdef TSIM_MUTANT_SETDMAREG
    /* A deliberately broken build (tests/test_native_engine.py shows the lockstep check catches it):
     * SETDMAREG also flips bit 0 of the thread's GPR 0. */
    case OP_SETDMAREG: {
        int64_t cycles = thcon_setdmareg(v, thread, word);
        if (cycles != NATIVE_DEFER)
            v->gprs[thread * GPR_COUNT] ^= 1;
        return cycles;
    }
#else
    case OP_SETDMAREG: return thcon_setdmareg(v, thread, word);
#endif
    case OP_ADDDMAREG: return thcon_adddmareg(v, thread, word);
    case OP_SUBDMAREG: return thcon_subdmareg(v, thread, word);
    case OP_MULDMAREG: return thcon_muldmareg(v, thread, word);
    case OP_BITWOPDMAREG: return thcon_bitwopdmareg(v, thread, word);
    case OP_SHIFTDMAREG: return thcon_shiftdmareg(v, thread, word);
    case OP_CMPDMAREG: return thcon_cmpdmareg(v, thread, word);

    case OP_SETADC: return adc_setadc(v, thread, word);
    case OP_SETADCXY: return adc_setadcxy(v, thread, word);
    case OP_SETADCZW: return adc_setadczw(v, thread, word);
    case OP_SETADCXX: return adc_setadcxx(v, thread, word);
    case OP_INCADCXY: return adc_incadcxy(v, thread, word);
    case OP_INCADCZW: return adc_incadczw(v, thread, word);
    case OP_ADDRCRXY: return adc_addrcrxy(v, thread, word);
    case OP_ADDRCRZW: return adc_addrcrzw(v, thread, word);
    case OP_SETRWC: return adc_setrwc(v, thread, word);
    case OP_INCRWC: return adc_incrwc(v, thread, word);

    case OP_SETC16: return config_setc16(v, thread, word);
    case OP_WRCFG: return config_wrcfg(v, thread, word);
    case OP_RDCFG: return config_rdcfg(v, thread, word);
    case OP_RMWCIB0: return config_rmwcib0(v, thread, word);
    case OP_RMWCIB1: return config_rmwcib1(v, thread, word);
    case OP_RMWCIB2: return config_rmwcib2(v, thread, word);
    case OP_RMWCIB3: return config_rmwcib3(v, thread, word);
    case OP_CFGSHIFTMASK: return config_cfgshiftmask(v, thread, word);

    default:
        return NATIVE_DEFER;
    }
}
