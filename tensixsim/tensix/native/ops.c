/* Instruction dispatch of the native engine: opcode -> handler; everything else defers to Python. */
#include "matrix.h"
#include "ops.h"
#include "sfpu.h"
#include "sfpu_float.h"

int64_t tsim_native_op(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
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
    case OP_LOADIND: return thcon_loadind(v, thread, word);
    case OP_STOREIND: return thcon_storeind(v, thread, word, cycle);
    case OP_ATINCGET: return thcon_atincget(v, thread, word, cycle);
    case OP_ATINCGETPTR: return thcon_atincgetptr(v, thread, word, cycle);
    case OP_ATSWAP: return thcon_atswap(v, thread, word, cycle);
    case OP_ATCAS: return thcon_atcas(v, thread, word, cycle);
    case OP_REG2FLOP: return thcon_reg2flop(v, thread, word);
    case OP_FLUSHDMA: return thcon_flushdma(v, thread, word, cycle);

    case OP_SEMINIT: return sync_seminit(v, thread, word);
    case OP_SEMPOST: return sync_sempost(v, thread, word);
    case OP_SEMGET: return sync_semget(v, thread, word);
    case OP_SEMWAIT: return sync_semwait(v, thread, word, cycle);
    case OP_STALLWAIT: return sync_stallwait(v, thread, word, cycle);
    case OP_STREAMWAIT: return sync_streamwait(v, thread, word, cycle);
    case OP_ATGETM: return sync_atgetm(v, thread, word);
    case OP_ATRELM: return sync_atrelm(v, thread, word);

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

    case OP_UNPACR: return unpack_unpacr(v, thread, word, cycle);

    case OP_MVMUL: return matrix_mvmul(v, thread, word, cycle);
    case OP_ELWADD: return matrix_elwadd(v, thread, word, cycle);
    case OP_ELWSUB: return matrix_elwsub(v, thread, word, cycle);
    case OP_ELWMUL: return matrix_elwmul(v, thread, word, cycle);
    case OP_ZEROACC: return matrix_zeroacc(v, thread, word, cycle);

    case OP_PACR: return pack_pacr(v, thread, word, cycle);

    case OP_SFPMAD: return sfpu_sfpmad(v, thread, word, cycle);
    case OP_SFPADD: return sfpu_sfpadd(v, thread, word, cycle);
    case OP_SFPMUL: return sfpu_sfpmul(v, thread, word, cycle);
    case OP_SFPADDI: return sfpu_sfpaddi(v, thread, word, cycle);
    case OP_SFPMULI: return sfpu_sfpmuli(v, thread, word, cycle);
    case OP_SFPMUL24: return sfpu_sfpmul24(v, thread, word, cycle);
    case OP_SFPLUT: return sfpu_sfplut(v, thread, word, cycle);
    case OP_SFPLUTFP32: return sfpu_sfplutfp32(v, thread, word, cycle);
    case OP_SFPDIVP2: return sfpu_sfpdivp2(v, thread, word, cycle);
    case OP_SFPARECIP: return sfpu_sfparecip(v, thread, word, cycle);
    case OP_SFPGT: return sfpu_sfpgt(v, thread, word, cycle);
    case OP_SFPLE: return sfpu_sfple(v, thread, word, cycle);
    case OP_SFPSWAP: return sfpu_sfpswap(v, thread, word, cycle);
    case OP_SFPTRANSP: return sfpu_sfptransp(v, thread, word, cycle);
    case OP_SFPSHFT2: return sfpu_sfpshft2(v, thread, word, cycle);
    case OP_SFPCAST: return sfpu_sfpcast(v, thread, word, cycle);
    case OP_SFP_STOCH_RND: return sfpu_sfp_stoch_rnd(v, thread, word, cycle);

    case OP_SFPLOAD: return sfpu_sfpload(v, thread, word, cycle);
    case OP_SFPSTORE: return sfpu_sfpstore(v, thread, word, cycle);
    case OP_SFPLOADI: return sfpu_sfploadi(v, thread, word, cycle);
    case OP_SFPMOV: return sfpu_sfpmov(v, thread, word, cycle);
    case OP_SFPNOP: return sfpu_sfpnop(v, thread, word, cycle);
    case OP_SFPCONFIG: return sfpu_sfpconfig(v, thread, word, cycle);
    case OP_SFPSETCC: return sfpu_sfpsetcc(v, thread, word, cycle);
    case OP_SFPENCC: return sfpu_sfpencc(v, thread, word, cycle);
    case OP_SFPCOMPC: return sfpu_sfpcompc(v, thread, word, cycle);
    case OP_SFPPUSHC: return sfpu_sfppushc(v, thread, word, cycle);
    case OP_SFPPOPC: return sfpu_sfppopc(v, thread, word, cycle);
    case OP_SFPAND: return sfpu_sfpand(v, thread, word, cycle);
    case OP_SFPOR: return sfpu_sfpor(v, thread, word, cycle);
    case OP_SFPXOR: return sfpu_sfpxor(v, thread, word, cycle);
    case OP_SFPNOT: return sfpu_sfpnot(v, thread, word, cycle);
    case OP_SFPIADD: return sfpu_sfpiadd(v, thread, word, cycle);
    case OP_SFPSHFT: return sfpu_sfpshft(v, thread, word, cycle);
    case OP_SFPLZ: return sfpu_sfplz(v, thread, word, cycle);
    case OP_SFPABS: return sfpu_sfpabs(v, thread, word, cycle);
    case OP_SFPEXEXP: return sfpu_sfpexexp(v, thread, word, cycle);
    case OP_SFPEXMAN: return sfpu_sfpexman(v, thread, word, cycle);
    case OP_SFPSETEXP: return sfpu_sfpsetexp(v, thread, word, cycle);
    case OP_SFPSETMAN: return sfpu_sfpsetman(v, thread, word, cycle);
    case OP_SFPSETSGN: return sfpu_sfpsetsgn(v, thread, word, cycle);

    default:
        return NATIVE_DEFER;
    }
}
