# A model's answer to "What is the compound annual growth rate of revenue from 2019 to 2023?"
def solution():
    revenue_2019 = 5735
    revenue_2023 = 8_129.4
    years = 2023 - 2019
    cagr = (revenue_2023 / revenue_2019) ** (1 / years) - 1
    print(f"Revenue grew from ${revenue_2019:,} to ${revenue_2023:,.1f}")
    print(f"CAGR over {years} years: {cagr:.2%}")
    return round(cagr * 100, 2)
