/* Instruction dispatch of the native engine: opcode -> handler; everything else defers to Python. */
#include <stddef.h>

#include "matrix.h"
#include "ops.h"
#include "sfpu.h"
#include "sfpu_float.h"

/* The vector unit's handlers by opcode (NULL: not a vector-unit instruction this engine runs). Wormhole's
 * library has no SFPMUL24, SFPARECIP, SFPGT, SFPLE (Blackhole's only). */
sfpu_handler tsim_sfpu_handler(uint32_t opcode)
{
    switch (opcode) {
#ifndef TSIM_WORMHOLE
    case OP_SFPMUL24: return sfpu_sfpmul24;
    case OP_SFPARECIP: return sfpu_sfparecip;
    case OP_SFPGT: return sfpu_sfpgt;
    case OP_SFPLE: return sfpu_sfple;
#endif
    case OP_SFPLOADMACRO: return sfpu_sfploadmacro;
    case OP_SFPMAD: return sfpu_sfpmad;
    case OP_SFPADD: return sfpu_sfpadd;
    case OP_SFPMUL: return sfpu_sfpmul;
    case OP_SFPADDI: return sfpu_sfpaddi;
    case OP_SFPMULI: return sfpu_sfpmuli;
    case OP_SFPLUT: return sfpu_sfplut;
    case OP_SFPLUTFP32: return sfpu_sfplutfp32;
    case OP_SFPDIVP2: return sfpu_sfpdivp2;
    case OP_SFPSWAP: return sfpu_sfpswap;
    case OP_SFPTRANSP: return sfpu_sfptransp;
    case OP_SFPSHFT2: return sfpu_sfpshft2;
    case OP_SFPCAST: return sfpu_sfpcast;
    case OP_SFP_STOCH_RND: return sfpu_sfp_stoch_rnd;
    case OP_SFPLOAD: return sfpu_sfpload;
    case OP_SFPSTORE: return sfpu_sfpstore;
    case OP_SFPLOADI: return sfpu_sfploadi;
    case OP_SFPMOV: return sfpu_sfpmov;
    case OP_SFPNOP: return sfpu_sfpnop;
    case OP_SFPCONFIG: return sfpu_sfpconfig;
    case OP_SFPSETCC: return sfpu_sfpsetcc;
    case OP_SFPENCC: return sfpu_sfpencc;
    case OP_SFPCOMPC: return sfpu_sfpcompc;
    case OP_SFPPUSHC: return sfpu_sfppushc;
    case OP_SFPPOPC: return sfpu_sfppopc;
    case OP_SFPAND: return sfpu_sfpand;
    case OP_SFPOR: return sfpu_sfpor;
    case OP_SFPXOR: return sfpu_sfpxor;
    case OP_SFPNOT: return sfpu_sfpnot;
    case OP_SFPIADD: return sfpu_sfpiadd;
    case OP_SFPSHFT: return sfpu_sfpshft;
    case OP_SFPLZ: return sfpu_sfplz;
    case OP_SFPABS: return sfpu_sfpabs;
    case OP_SFPEXEXP: return sfpu_sfpexexp;
    case OP_SFPEXMAN: return sfpu_sfpexman;
    case OP_SFPSETEXP: return sfpu_sfpsetexp;
    case OP_SFPSETMAN: return sfpu_sfpsetman;
    case OP_SFPSETSGN: return sfpu_sfpsetsgn;
    default: return NULL;
    }
}

#ifdef NATIVE_OPCODE_BITS_INIT
/* The instructions this architecture shares exactly with Blackhole (gen_fields.native_instructions);
 * its every other instruction is deferred, whatever handler the dispatch below has for the opcode. */
static const uint32_t native_opcodes[8] = NATIVE_OPCODE_BITS_INIT;
#endif

/* Every instruction but the vector unit's. */
static int64_t dispatch(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    switch (OPCODE_OF(word)) {
    case OP_NOP: /* frontend/pipes.py nop: Retire(1), the default */
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
#ifdef OP_STREAMWAIT
    case OP_STREAMWAIT: return sync_streamwait(v, thread, word, cycle);
#endif
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
#ifdef OP_CFGSHIFTMASK
    case OP_CFGSHIFTMASK: return config_cfgshiftmask(v, thread, word);
#endif

    case OP_MVMUL: return matrix_mvmul(v, thread, word, cycle);
    case OP_ELWADD: return matrix_elwadd(v, thread, word, cycle);
    case OP_ELWSUB: return matrix_elwsub(v, thread, word, cycle);
    case OP_ELWMUL: return matrix_elwmul(v, thread, word, cycle);
    case OP_DOTPV: return matrix_dotpv(v, thread, word, cycle);
    case OP_GAPOOL: return matrix_gapool(v, thread, word, cycle);
    case OP_GMPOOL: return matrix_gmpool(v, thread, word, cycle);
    case OP_MOVA2D: return matrix_mova2d(v, thread, word, cycle);
    case OP_MOVB2D: return matrix_movb2d(v, thread, word, cycle);
    case OP_MOVD2A: return matrix_movd2a(v, thread, word, cycle);
    case OP_MOVD2B: return matrix_movd2b(v, thread, word, cycle);
    case OP_MOVB2A: return matrix_movb2a(v, thread, word, cycle);
    case OP_MOVDBGA2D: return matrix_movdbga2d(v, thread, word, cycle);
    case OP_ZEROACC: return matrix_zeroacc(v, thread, word, cycle);
    case OP_SHIFTXA: return matrix_shiftxa(v, thread, word, cycle);
    case OP_SHIFTXB: return matrix_shiftxb(v, thread, word, cycle);
    case OP_TRNSPSRCB: return matrix_trnspsrcb(v, thread, word, cycle);
    case OP_GATESRCRST: return matrix_gatesrcrst(v, thread, word, cycle);
    case OP_CLREXPHIST: return matrix_clrexphist(v, thread, word, cycle);
    case OP_ZEROSRC: return src_banks_zerosrc(v, thread, word, cycle);
    case OP_CLEARDVALID: return src_banks_cleardvalid(v, thread, word, cycle);
    case OP_SETDVALID: return src_banks_setdvalid(v, thread, word, cycle);

    case OP_UNPACR: return unpack_unpacr(v, thread, word, cycle);
    case OP_UNPACR_NOP: return src_banks_unpacr_nop(v, thread, word, cycle);
    case OP_PACR: return pack_pacr(v, thread, word, cycle);

    default:
        return NATIVE_DEFER;
    }
}

int64_t tsim_native_op(struct copro_view *v, uint32_t thread, uint32_t word, int64_t cycle)
{
    if (thread >= v->threads)
        return NATIVE_DEFER; /* every handler indexes per-pipe state with it */
#ifdef NATIVE_OPCODE_BITS_INIT
    uint32_t opcode = OPCODE_OF(word);
    if (!(native_opcodes[opcode >> 5] >> (opcode & 31) & 1))
        return NATIVE_DEFER;
#endif
    /* Engine._issue: the work SFPLOADMACRO scheduled up to now runs first. */
    if (sfpu_macro_pending(v) && !sfpu_macro_settle(v, cycle))
        return NATIVE_DEFER;
    sfpu_handler handler = tsim_sfpu_handler(OPCODE_OF(word));
    if (handler)
        return sfpu_macro_issue(v, thread, word, cycle, handler);
    return dispatch(v, thread, word, cycle);
}
