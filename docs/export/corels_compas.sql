-- Exported by glasswork 0.1.0 from run 2dcfd732f7b2401f9d956a3a6149b7a4 (corels-compas, solver corels).
-- spec b34c74db3ddb17c1, data 23a14ef8bd9c7f9a
-- Trained on every row of its data (no data.where filter).
-- Reads the columns the antecedents of data:corels/compas_train.out name: sex, juvenile-crimes, priors
SELECT *,
  CASE WHEN ("priors" IS NULL OR LOWER(TRIM(CAST("priors" AS VARCHAR), ' 	
')) IN ('', 'nan')) OR ("sex" IS NULL OR LOWER(TRIM(CAST("sex" AS VARCHAR), ' 	
')) IN ('', 'nan')) OR ("juvenile-crimes" IS NULL OR LOWER(TRIM(CAST("juvenile-crimes" AS VARCHAR), ' 	
')) IN ('', 'nan')) THEN NULL ELSE CASE
    WHEN (CAST("sex" AS VARCHAR) = 'Male' AND CAST("juvenile-crimes" AS VARCHAR) = '>0') THEN 'Yes'
    WHEN (CAST("priors" AS VARCHAR) = '>3') THEN 'Yes'
    ELSE 'No'
  END END AS "prediction",
  CASE WHEN ("priors" IS NULL OR LOWER(TRIM(CAST("priors" AS VARCHAR), ' 	
')) IN ('', 'nan')) OR ("sex" IS NULL OR LOWER(TRIM(CAST("sex" AS VARCHAR), ' 	
')) IN ('', 'nan')) OR ("juvenile-crimes" IS NULL OR LOWER(TRIM(CAST("juvenile-crimes" AS VARCHAR), ' 	
')) IN ('', 'nan')) THEN NULL ELSE CASE
    WHEN (CAST("sex" AS VARCHAR) = 'Male' AND CAST("juvenile-crimes" AS VARCHAR) = '>0') THEN 0.28607594936708863e0
    WHEN (CAST("priors" AS VARCHAR) = '>3') THEN 0.40152477763659467e0
    ELSE 0.6606060606060606e0
  END END AS "p_No",
  CASE WHEN ("priors" IS NULL OR LOWER(TRIM(CAST("priors" AS VARCHAR), ' 	
')) IN ('', 'nan')) OR ("sex" IS NULL OR LOWER(TRIM(CAST("sex" AS VARCHAR), ' 	
')) IN ('', 'nan')) OR ("juvenile-crimes" IS NULL OR LOWER(TRIM(CAST("juvenile-crimes" AS VARCHAR), ' 	
')) IN ('', 'nan')) THEN NULL ELSE CASE
    WHEN (CAST("sex" AS VARCHAR) = 'Male' AND CAST("juvenile-crimes" AS VARCHAR) = '>0') THEN 0.7139240506329114e0
    WHEN (CAST("priors" AS VARCHAR) = '>3') THEN 0.5984752223634053e0
    ELSE 0.3393939393939394e0
  END END AS "p_Yes"
FROM "data"
