/*
 * cfi.c - the unwind rule of one code address, read from its module's
 * .eh_frame (x86_64): the FDE found through .eh_frame_hdr's binary-search
 * table, its CIE's augmentations ('z', 'R', 'P', 'L', 'S') and the call
 * frame instructions of both run up to the address. Keeps only what the
 * walk needs (the CFA, RBP and the return address) and packs it in one
 * word (cfi.h). Every read stays inside one of the module's segments;
 * whatever this interpreter does not know gives MTR_CFI_FALLBACK, never a
 * guess. No allocation, no lock, no stdio: it runs in the malloc path.
 */
#include <string.h>

#include "cfi.h"

/* DWARF register numbers on x86_64 */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

/* DW_EH_PE_* pointer encodings */
#define PE_OMIT 0xff
#define PE_FORM 0x0f
#define PE_APPL 0x70
#define PE_INDIRECT 0x80
#define PE_PCREL 0x10
#define PE_DATAREL 0x30

enum { R_SAME, R_OFF, R_UNDEF, R_OTHER };

struct row {
    int cfa_expr;          /* the CFA is a DWARF expression */
    uint64_t cfa_reg;
    int64_t cfa_off;
    int rbp, ra;           /* R_* */
    int64_t rbp_off, ra_off;
};

/* A bounded reader over [p, end). */
struct rd {
    uintptr_t p, end;
    int bad;
};

static int inside(const struct mtr_cfi_mod *m, uintptr_t a, uintptr_t len, uintptr_t *seg_end)
{
    for (int i = 0; i < m->nseg; i++)
        if (a >= m->lo[i] && a < m->hi[i] && len <= m->hi[i] - a) {
            if (seg_end)
                *seg_end = m->hi[i];
            return 1;
        }
    return 0;
}

static uint64_t rd_bytes(struct rd *r, unsigned n)
{
    uint64_t v = 0;
    if (r->bad || r->end - r->p < n || r->p > r->end) {
        r->bad = 1;
        return 0;
    }
    memcpy(&v, (const void *)r->p, n);   /* little-endian */
    r->p += n;
    return v;
}

static uint64_t rd_uleb(struct rd *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint64_t b = rd_bytes(r, 1);
        if (r->bad || shift > 63) {
            r->bad = 1;
            return 0;
        }
        v |= (b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
}

static int64_t rd_sleb(struct rd *r)
{
    uint64_t v = 0, b;
    unsigned shift = 0;
    do {
        b = rd_bytes(r, 1);
        if (r->bad || shift > 63) {
            r->bad = 1;
            return 0;
        }
        v |= (b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* A pointer in encoding enc; datarel relative to base. Indirect pointers
 * are returned undereferenced (only the personality routine's is, and it
 * is skipped). */
static uintptr_t rd_ptr(struct rd *r, unsigned enc, uintptr_t base)
{
    uintptr_t at = r->p;
    uint64_t v;
    switch (enc & PE_FORM) {
    case 0x00: v = rd_bytes(r, 8); break;                        /* absptr */
    case 0x01: v = rd_uleb(r); break;
    case 0x02: v = rd_bytes(r, 2); break;
    case 0x03: v = rd_bytes(r, 4); break;
    case 0x04: v = rd_bytes(r, 8); break;
    case 0x09: v = (uint64_t)rd_sleb(r); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_bytes(r, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_bytes(r, 4); break;
    case 0x0c: v = rd_bytes(r, 8); break;
    default: r->bad = 1; return 0;
    }
    switch (enc & PE_APPL) {
    case 0: break;
    case PE_PCREL: v += at; break;
    case PE_DATAREL:
        if (!base)
            r->bad = 1;
        v += base;
        break;
    default: r->bad = 1; break;                                  /* textrel, funcrel, aligned */
    }
    return (uintptr_t)v;
}

struct cie {
    uint64_t code_align;
    int64_t data_align;
    unsigned fde_enc;
    int has_z, signal;
    uintptr_t insns, end;
};

/* The record (CIE or FDE) at a: its contents [*body, *end). */
static int record(const struct mtr_cfi_mod *m, uintptr_t a, uintptr_t *body, uintptr_t *end)
{
    uintptr_t seg_end;
    if (!inside(m, a, 4, &seg_end))
        return -1;
    uint32_t len;
    memcpy(&len, (const void *)a, 4);
    if (len == 0 || len == 0xffffffffu || len > seg_end - a - 4)
        return -1;   /* a terminator, a 64-bit length (never emitted on x86_64), or past the segment */
    *body = a + 4;
    *end = a + 4 + len;
    return 0;
}

static int parse_cie(const struct mtr_cfi_mod *m, uintptr_t a, struct cie *c)
{
    uintptr_t body, end;
    if (record(m, a, &body, &end) != 0)
        return -1;
    struct rd r = { body, end, 0 };
    if (rd_bytes(&r, 4) != 0)
        return -1;                                               /* not a CIE */
    unsigned version = (unsigned)rd_bytes(&r, 1);
    if (version != 1 && version != 3 && version != 4)
        return -1;
    char aug[8];
    size_t n = 0;
    for (;;) {
        char ch = (char)rd_bytes(&r, 1);
        if (r.bad || n == sizeof aug)
            return -1;
        aug[n++] = ch;
        if (!ch)
            break;
    }
    if (version == 4) {
        rd_bytes(&r, 2);                                         /* address and segment size */
    }
    memset(c, 0, sizeof *c);
    c->code_align = rd_uleb(&r);
    c->data_align = rd_sleb(&r);
    uint64_t ra_reg = version == 1 ? rd_bytes(&r, 1) : rd_uleb(&r);
    if (r.bad || ra_reg != REG_RA)
        return -1;
    c->fde_enc = 0;                                              /* absptr */
    uintptr_t aug_end = 0;
    for (size_t i = 0; aug[i]; i++) {
        switch (aug[i]) {
        case 'z':
            if (i != 0)
                return -1;
            c->has_z = 1;
            {
                uint64_t l = rd_uleb(&r);
                if (r.bad || l > r.end - r.p)
                    return -1;
                aug_end = r.p + l;
            }
            break;
        case 'R': c->fde_enc = (unsigned)rd_bytes(&r, 1); break;
        case 'L': rd_bytes(&r, 1); break;
        case 'P': {
            unsigned enc = (unsigned)rd_bytes(&r, 1);
            rd_ptr(&r, enc & ~PE_INDIRECT & ~PE_APPL, 0);       /* skipped */
            break;
        }
        case 'S': c->signal = 1; break;
        default:
            if (!c->has_z)
                return -1;                                       /* cannot skip what is unknown */
            r.p = aug_end;                                       /* the rest: skipped by its length */
            goto done;
        }
        if (r.bad)
            return -1;
    }
done:
    if (c->has_z) {
        if (r.p > aug_end)
            return -1;
        r.p = aug_end;
    }
    if (r.bad || c->code_align == 0)
        return -1;
    c->insns = r.p;
    c->end = end;
    return 0;
}

/* Runs call frame instructions [r->p, r->end) from location *loc while the
 * rows they describe start at or before pc. 0, or -1 when an instruction
 * is unknown or malformed. */
#define STATES 8
static int run(struct rd *r, const struct cie *c, uintptr_t *loc, uintptr_t pc,
               struct row *s, const struct row *init, unsigned fde_enc)
{
    struct row saved[STATES];
    int depth = 0;
    while (r->p < r->end) {
        unsigned op = (unsigned)rd_bytes(r, 1), lo6 = op & 0x3f;
        uint64_t reg = 0, delta = 0;
        int64_t off = 0;
        int set = 0;   /* 1: reg gets offset off (bytes) */
        switch (op >> 6) {
        case 1:                                                  /* advance_loc */
            delta = lo6 * c->code_align;
            goto advance;
        case 2:                                                  /* offset */
            reg = lo6;
            off = (int64_t)rd_uleb(r) * c->data_align;
            set = 1;
            break;
        case 3:                                                  /* restore */
            reg = lo6;
            goto restore;
        default:
            switch (op) {
            case 0x00: break;                                    /* nop */
            case 0x01: {                                         /* set_loc */
                uintptr_t to = rd_ptr(r, fde_enc, 0);
                if (r->bad || to < *loc)
                    return -1;
                if (to > pc)
                    return 0;
                *loc = to;
                break;
            }
            case 0x02: delta = rd_bytes(r, 1) * c->code_align; goto advance;
            case 0x03: delta = rd_bytes(r, 2) * c->code_align; goto advance;
            case 0x04: delta = rd_bytes(r, 4) * c->code_align; goto advance;
            case 0x05:                                           /* offset_extended */
                reg = rd_uleb(r);
                off = (int64_t)rd_uleb(r) * c->data_align;
                set = 1;
                break;
            case 0x06:                                           /* restore_extended */
                reg = rd_uleb(r);
                goto restore;
            case 0x07:                                           /* undefined */
                reg = rd_uleb(r);
                if (reg == REG_RBP)
                    s->rbp = R_UNDEF;
                else if (reg == REG_RA)
                    s->ra = R_UNDEF;
                break;
            case 0x08:                                           /* same_value */
                reg = rd_uleb(r);
                if (reg == REG_RBP)
                    s->rbp = R_SAME;
                else if (reg == REG_RA)
                    s->ra = R_SAME;
                break;
            case 0x09:                                           /* register */
                reg = rd_uleb(r);
                rd_uleb(r);
                goto other;
            case 0x0a:                                           /* remember_state */
                if (depth == STATES)
                    return -1;
                saved[depth++] = *s;
                break;
            case 0x0b:                                           /* restore_state */
                if (depth == 0)
                    return -1;
                *s = saved[--depth];   /* the whole row, the CFA's rule included */
                break;
            case 0x0c:                                           /* def_cfa */
                s->cfa_reg = rd_uleb(r);
                s->cfa_off = (int64_t)rd_uleb(r);
                s->cfa_expr = 0;
                break;
            case 0x0d:                                           /* def_cfa_register */
                s->cfa_reg = rd_uleb(r);
                s->cfa_expr = 0;
                break;
            case 0x0e:                                           /* def_cfa_offset */
                s->cfa_off = (int64_t)rd_uleb(r);
                break;
            case 0x0f: {                                         /* def_cfa_expression */
                uint64_t l = rd_uleb(r);
                if (r->bad || l > r->end - r->p)
                    return -1;
                r->p += l;
                s->cfa_expr = 1;
                break;
            }
            case 0x10:                                           /* expression */
            case 0x16: {                                         /* val_expression */
                reg = rd_uleb(r);
                uint64_t l = rd_uleb(r);
                if (r->bad || l > r->end - r->p)
                    return -1;
                r->p += l;
                goto other;
            }
            case 0x11:                                           /* offset_extended_sf */
                reg = rd_uleb(r);
                off = rd_sleb(r) * c->data_align;
                set = 1;
                break;
            case 0x12:                                           /* def_cfa_sf */
                s->cfa_reg = rd_uleb(r);
                s->cfa_off = rd_sleb(r) * c->data_align;
                s->cfa_expr = 0;
                break;
            case 0x13:                                           /* def_cfa_offset_sf */
                s->cfa_off = rd_sleb(r) * c->data_align;
                break;
            case 0x14:                                           /* val_offset */
                reg = rd_uleb(r);
                rd_uleb(r);
                goto other;
            case 0x15:                                           /* val_offset_sf */
                reg = rd_uleb(r);
                rd_sleb(r);
                goto other;
            case 0x2e:                                           /* GNU_args_size */
                rd_uleb(r);
                break;
            case 0x2f:                                           /* GNU_negative_offset_extended */
                reg = rd_uleb(r);
                off = -(int64_t)rd_uleb(r) * c->data_align;
                set = 1;
                break;
            default:
                return -1;
            }
        }
        if (r->bad)
            return -1;
        if (set) {
            if (reg == REG_RBP)
                s->rbp = R_OFF, s->rbp_off = off;
            else if (reg == REG_RA)
                s->ra = R_OFF, s->ra_off = off;
        }
        continue;
    advance:
        if (r->bad)
            return -1;
        if (delta > pc - *loc)
            return 0;                                            /* the next row starts after pc */
        *loc += delta;
        continue;
    restore:
        if (r->bad || !init)
            return -1;
        if (reg == REG_RBP)
            s->rbp = init->rbp, s->rbp_off = init->rbp_off;
        else if (reg == REG_RA)
            s->ra = init->ra, s->ra_off = init->ra_off;
        continue;
    other:
        if (r->bad)
            return -1;
        if (reg == REG_RBP)
            s->rbp = R_OTHER;
        else if (reg == REG_RA)
            s->ra = R_OTHER;
        continue;
    }
    return r->bad ? -1 : 0;
}

/* The row packed (cfi.h), or MTR_CFI_FALLBACK. */
static uint64_t pack(const struct row *s, const struct cie *c)
{
    if (s->ra == R_UNDEF)
        return MTR_CFI_END;
    if (c->signal || s->cfa_expr || (s->cfa_reg != REG_RSP && s->cfa_reg != REG_RBP))
        return MTR_CFI_FALLBACK;
    if (s->ra != R_OFF || s->ra_off != -8)
        return MTR_CFI_FALLBACK;
    if (s->cfa_off < 8 || s->cfa_off > MTR_CFI_MAX_OFF || (s->cfa_off & 7))
        return MTR_CFI_FALLBACK;
    uint64_t r = MTR_CFI_STEP | (s->cfa_reg == REG_RBP ? 4u : 0u) |
                 ((uint64_t)(s->cfa_off / 8) << 12);
    if (s->rbp == R_OFF) {
        if (s->rbp_off >= 0 || s->rbp_off < -8 * MTR_CFI_MAX_SLOT || (s->rbp_off & 7))
            return MTR_CFI_FALLBACK;
        r |= 8u | ((uint64_t)(-s->rbp_off / 8) << 4);
    } else if (s->rbp != R_SAME) {
        return MTR_CFI_FALLBACK;
    }
    return r;
}

uint64_t mtr_cfi_rule_fde(const struct mtr_cfi_mod *m, uintptr_t fde, uintptr_t pc)
{
    uintptr_t body, end;
    if (record(m, fde, &body, &end) != 0)
        return MTR_CFI_FALLBACK;
    struct rd r = { body, end, 0 };
    uint32_t cie_ptr = (uint32_t)rd_bytes(&r, 4);
    if (r.bad || cie_ptr == 0 || cie_ptr > body)
        return MTR_CFI_FALLBACK;                                 /* a CIE, or nowhere */
    struct cie c;
    if (parse_cie(m, body - cie_ptr, &c) != 0)
        return MTR_CFI_FALLBACK;
    if (c.fde_enc & PE_INDIRECT)
        return MTR_CFI_FALLBACK;
    uintptr_t begin = rd_ptr(&r, c.fde_enc, 0);
    uintptr_t range = rd_ptr(&r, c.fde_enc & PE_FORM, 0);
    if (r.bad || pc < begin || pc - begin >= range)
        return MTR_CFI_FALLBACK;                                 /* pc is not in this FDE */
    if (c.has_z) {
        uint64_t l = rd_uleb(&r);
        if (r.bad || l > r.end - r.p)
            return MTR_CFI_FALLBACK;
        r.p += l;
    }
    struct row s = { 0, 0, 0, R_SAME, R_SAME, 0, 0 }, init;
    uintptr_t loc = begin;
    struct rd ci = { c.insns, c.end, 0 };
    if (run(&ci, &c, &loc, pc, &s, NULL, c.fde_enc) != 0)
        return MTR_CFI_FALLBACK;
    init = s;
    loc = begin;
    if (run(&r, &c, &loc, pc, &s, &init, c.fde_enc) != 0)
        return MTR_CFI_FALLBACK;
    return pack(&s, &c);
}

uint64_t mtr_cfi_rule_at(const struct mtr_cfi_mod *m, uintptr_t pc)
{
    uintptr_t h = m->hdr, seg_end;
    if (!h || !inside(m, h, 4, &seg_end))
        return MTR_CFI_FALLBACK;
    struct rd r = { h, seg_end, 0 };
    unsigned version = (unsigned)rd_bytes(&r, 1);
    unsigned frame_enc = (unsigned)rd_bytes(&r, 1);
    unsigned count_enc = (unsigned)rd_bytes(&r, 1);
    unsigned table_enc = (unsigned)rd_bytes(&r, 1);
    /* only the table every linker writes: pairs of 4-byte offsets from
     * the header (DW_EH_PE_datarel | DW_EH_PE_sdata4) */
    if (version != 1 || frame_enc == PE_OMIT || count_enc == PE_OMIT || table_enc != 0x3b)
        return MTR_CFI_FALLBACK;
    rd_ptr(&r, frame_enc, h);
    uint64_t count = rd_ptr(&r, count_enc, h);
    if (r.bad || count == 0 || count > (r.end - r.p) / 8)
        return MTR_CFI_FALLBACK;
    const unsigned char *table = (const unsigned char *)r.p;
    int64_t want = (int64_t)(pc - h);
    /* the last entry whose start is at or before pc */
    uint64_t a = 0, b = count;
    while (b - a > 1) {
        uint64_t mid = a + (b - a) / 2;
        int32_t start;
        memcpy(&start, table + 8 * mid, 4);
        if ((int64_t)start <= want)
            a = mid;
        else
            b = mid;
    }
    int32_t start, fde;
    memcpy(&start, table + 8 * a, 4);
    memcpy(&fde, table + 8 * a + 4, 4);
    if ((int64_t)start > want)
        return MTR_CFI_FALLBACK;                                 /* before the first function */
    return mtr_cfi_rule_fde(m, h + (uintptr_t)(intptr_t)fde, pc);
}
