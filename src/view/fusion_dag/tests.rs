use super::*;

mod real_traces;

#[test]
fn a_box_head_wraps_a_long_name_at_word_ends_onto_two_lines_of_its_width() {
    // cuBLAS's Hopper GEMM read out: library, op, types, layout and tile, none cut.
    let name = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
    let head = head_lines(12, name);
    assert_eq!(head, ["12 cuBLAS: sm90 GEMM", "bf16bf16 tn, tile 128×128×64"]);
    // PyTorch's own kernel: its name and op, without the library's label.
    let add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
    assert_eq!(head_lines(3, add), ["3 vectorized_elementwise:", "add"]);
    assert_eq!(head_lines(1, "flash_fwd_kernel"), ["1 FlashAttention: forward"]);
    // The widest line measured in a browser overran by a few px at 29 characters.
    let tensile = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_EPS0_GRVWA8_GRVWB8_GSUAMB_IU1_K1_LBSPPA2048_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW16_LWPMn1_MIAV0_MIWT4_4_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WS64_WG64_4_1";
    for number in [9, 10, 42] {
        let head = head_lines(number, tensile);
        assert_eq!(head.len(), 2, "{head:?}");
        assert!(head.iter().all(|l| text_width(l) + 3.0 <= TEXT_WIDTH), "{head:?}");
        assert!(head[0].starts_with(&format!("{number} hipBLASLt/Tensile:")), "{head:?}");
    }
    let long = wrap(&"x".repeat(80), TEXT_WIDTH, 2);
    assert_eq!(long.len(), 2);
    assert!(long[1].ends_with('…') && text_width(&long[1]) <= TEXT_WIDTH);
}

#[test]
fn widths_follow_the_widest_fallback_font() {
    // Measured in headless Chromium at 11.5 px: "6 elementwise_manual_unroll:" is 175 px,
    // 196 px in the heads' bold.
    let line = "6 elementwise_manual_unroll:";
    assert!((175.0..=182.0).contains(&text_width(line)), "{}", text_width(line));
    assert!(text_width(line) * BOLD >= 196.0);
    assert_eq!(fit("aten::copy_", TEXT_WIDTH), "aten::copy_");
    assert!(text_width(&fit(&"m".repeat(40), TEXT_WIDTH)) <= TEXT_WIDTH);
}
